/**
 * NAL unit framing (ITU-T H.264 §7.3.1, §7.4.1): a one-byte header, then the RBSP with
 * emulation-prevention bytes so no 0x000000..0x000003 pattern appears inside the payload.
 */
export const NAL_IDR_SLICE = 5;
export const NAL_SPS = 7;
export const NAL_PPS = 8;

/** Inserts 0x03 after any two zero bytes that precede a byte ≤ 0x03 (§7.4.1.1). */
export function addEmulationPrevention(rbsp: Uint8Array): Uint8Array {
  let extra = 0;
  for (let i = 0, zeros = 0; i < rbsp.length; i++) {
    const byte = rbsp[i]!;
    if (zeros >= 2 && byte <= 3) {
      extra++;
      zeros = 0;
    }
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  if (extra === 0) return rbsp;
  const out = new Uint8Array(rbsp.length + extra);
  let o = 0;
  for (let i = 0, zeros = 0; i < rbsp.length; i++) {
    const byte = rbsp[i]!;
    if (zeros >= 2 && byte <= 3) {
      out[o++] = 3;
      zeros = 0;
    }
    out[o++] = byte;
    zeros = byte === 0 ? zeros + 1 : 0;
  }
  return out;
}

/**
 * A complete NAL unit (without start code or length prefix): forbidden_zero_bit = 0,
 * nal_ref_idc (2 bits), nal_unit_type (5 bits), then the escaped RBSP.
 */
export function nalUnit(type: number, refIdc: number, rbsp: Uint8Array): Uint8Array {
  const payload = addEmulationPrevention(rbsp);
  const out = new Uint8Array(1 + payload.length);
  out[0] = ((refIdc & 3) << 5) | (type & 0x1f);
  out.set(payload, 1);
  return out;
}
