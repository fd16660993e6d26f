/**
 * RIFF/WAVE writer for 16-bit PCM mono: the 44-byte canonical header followed by little-endian
 * samples. DataView keeps the output little-endian whatever the host byte order.
 * @see http://soundfile.sapp.org/doc/WaveFormat/
 */
const ASCII = new TextEncoder();

export const WAV_HEADER_BYTES = 44;

export function encodeWav(samples: Int16Array, sampleRate: number): Uint8Array {
  if (!Number.isInteger(sampleRate) || sampleRate < 1)
    throw new RangeError(`sample rate must be a positive integer, got ${sampleRate}`);
  const dataBytes = samples.length * 2;
  const out = new Uint8Array(WAV_HEADER_BYTES + dataBytes);
  const view = new DataView(out.buffer);
  out.set(ASCII.encode('RIFF'), 0);
  view.setUint32(4, 36 + dataBytes, true); // RIFF size counts everything after this field
  out.set(ASCII.encode('WAVE'), 8);
  out.set(ASCII.encode('fmt '), 12);
  view.setUint32(16, 16, true); // fmt chunk size for plain PCM
  view.setUint16(20, 1, true); // audio format 1 = PCM
  view.setUint16(22, 1, true); // channels
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * 2, true); // byte rate = rate * channels * bytesPerSample
  view.setUint16(32, 2, true); // block align
  view.setUint16(34, 16, true); // bits per sample
  out.set(ASCII.encode('data'), 36);
  view.setUint32(40, dataBytes, true);
  for (let i = 0; i < samples.length; i++) view.setInt16(WAV_HEADER_BYTES + 2 * i, samples[i]!, true);
  return out;
}
