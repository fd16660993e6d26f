/**
 * MSB-first bit writer with the H.264 descriptors u(n), ue(v), se(v) (ITU-T H.264 §7.2, §9.1).
 * Grows its buffer geometrically; `bytes()` copies whole bytes fast once aligned, which is what
 * I_PCM macroblocks need for their raw samples.
 * @see https://www.itu.int/rec/T-REC-H.264
 */
export class BitWriter {
  private buf: Uint8Array;
  private length = 0; // whole bytes written
  private acc = 0; // pending bits, right-aligned
  private bits = 0; // number of pending bits (0..7)

  constructor(capacity = 64) {
    this.buf = new Uint8Array(Math.max(16, capacity));
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.buf.length) return;
    const grown = new Uint8Array(Math.max(this.buf.length * 2, this.length + extra));
    grown.set(this.buf.subarray(0, this.length));
    this.buf = grown;
  }

  /** u(n): `value`'s low `n` bits, most significant first (n ≤ 32). */
  u(n: number, value: number): this {
    for (let i = n - 1; i >= 0; i--) {
      this.acc = (this.acc << 1) | (Math.floor(value / 2 ** i) & 1);
      if (++this.bits === 8) {
        this.reserve(1);
        this.buf[this.length++] = this.acc;
        this.acc = 0;
        this.bits = 0;
      }
    }
    return this;
  }

  /** ue(v): Exp-Golomb — leadingZeros zeros, then (value + 1) in leadingZeros + 1 bits (§9.1). */
  ue(value: number): this {
    const code = value + 1;
    const width = Math.floor(Math.log2(code)) + 1;
    return this.u(width - 1, 0).u(width, code);
  }

  /** se(v): signed mapping k>0 → 2k−1, k≤0 → −2k (§9.1.1, Table 9-3). */
  se(value: number): this {
    return this.ue(value > 0 ? 2 * value - 1 : -2 * value);
  }

  get byteAligned(): boolean {
    return this.bits === 0;
  }

  /** Pads with zero bits to the next byte boundary (e.g. pcm_alignment_zero_bit). */
  alignZero(): this {
    while (this.bits !== 0) this.u(1, 0);
    return this;
  }

  /** Raw bytes; the writer must be byte-aligned. */
  bytes(data: Uint8Array): this {
    if (this.bits !== 0) throw new Error('BitWriter.bytes needs byte alignment');
    this.reserve(data.length);
    this.buf.set(data, this.length);
    this.length += data.length;
    return this;
  }

  /** rbsp_trailing_bits(): a stop bit then zeros to the byte boundary (§7.3.2.11). */
  trailingBits(): this {
    return this.u(1, 1).alignZero();
  }

  /** The written bytes; call after alignment (trailingBits) so no bits are lost. */
  finish(): Uint8Array {
    if (this.bits !== 0) throw new Error('BitWriter.finish needs byte alignment');
    return this.buf.slice(0, this.length);
  }
}
