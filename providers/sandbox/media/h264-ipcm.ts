import { BitWriter } from './bit-writer.ts';
import { LOG2_MAX_FRAME_NUM, type FrameGeometry } from './h264-params.ts';
import { NAL_IDR_SLICE, nalUnit } from './h264-nal.ts';

/**
 * An IDR picture coded entirely with I_PCM macroblocks: raw samples, no prediction or transform,
 * so no encoder library is needed (ITU-T H.264 §7.3.3 slice_header, §7.3.4 slice_data,
 * §7.3.5 macroblock_layer). One slice per picture.
 */
export interface YuvFrame {
  /** Planes at macroblock-padded size: luma (widthMbs*16)², chroma half that in each direction. */
  y: Uint8Array;
  u: Uint8Array;
  v: Uint8Array;
}

/** mb_type 25 is I_PCM in I slices (Table 7-11). */
const MB_TYPE_I_PCM = 25;

/** Padded planes for the geometry; painters fill them in place. */
export function allocateFrame(geometry: FrameGeometry): YuvFrame {
  const lumaWidth = geometry.widthMbs * 16;
  const lumaHeight = geometry.heightMbs * 16;
  return {
    y: new Uint8Array(lumaWidth * lumaHeight),
    u: new Uint8Array((lumaWidth / 2) * (lumaHeight / 2)),
    v: new Uint8Array((lumaWidth / 2) * (lumaHeight / 2)),
  };
}

function writeSliceHeader(w: BitWriter, idrPicId: number): void {
  w.ue(0); // first_mb_in_slice
  w.ue(7); // slice_type 7: I, and every slice of the picture is I
  w.ue(0); // pic_parameter_set_id
  w.u(LOG2_MAX_FRAME_NUM, 0); // frame_num: 0 for IDR pictures
  // Consecutive IDR pictures must differ in idr_pic_id (§7.4.3), so alternate 0/1.
  w.ue(idrPicId);
  // pic_order_cnt_type 2 needs no POC fields; I slices carry no ref list modification.
  w.u(1, 0).u(1, 0); // dec_ref_pic_marking: no_output_of_prior_pics_flag, long_term_reference_flag
  w.se(0); // slice_qp_delta
  w.ue(1); // disable_deblocking_filter_idc 1: nothing to smooth between raw PCM blocks
}

/** Copies one macroblock's 16×16 luma then 8×8 Cb and 8×8 Cr samples in raster order (§7.3.5). */
function copyMacroblock(frame: YuvFrame, lumaWidth: number, mbX: number, mbY: number, out: Uint8Array): void {
  let o = 0;
  for (let row = 0; row < 16; row++) {
    const start = (mbY * 16 + row) * lumaWidth + mbX * 16;
    out.set(frame.y.subarray(start, start + 16), o);
    o += 16;
  }
  const chromaWidth = lumaWidth / 2;
  for (const plane of [frame.u, frame.v]) {
    for (let row = 0; row < 8; row++) {
      const start = (mbY * 8 + row) * chromaWidth + mbX * 8;
      out.set(plane.subarray(start, start + 8), o);
      o += 8;
    }
  }
}

/** The IDR slice NAL unit (nal_ref_idc 3, type 5) for one frame. */
export function idrPcmNal(geometry: FrameGeometry, frame: YuvFrame, idrPicId: number): Uint8Array {
  const mbCount = geometry.widthMbs * geometry.heightMbs;
  const w = new BitWriter(mbCount * 386 + 16);
  writeSliceHeader(w, idrPicId);
  const samples = new Uint8Array(384);
  for (let mb = 0; mb < mbCount; mb++) {
    // I slices have no mb_skip_run; CAVLC has no end_of_slice flag (more_rbsp_data decides).
    w.ue(MB_TYPE_I_PCM).alignZero(); // pcm_alignment_zero_bit(s)
    copyMacroblock(frame, geometry.widthMbs * 16, mb % geometry.widthMbs, Math.floor(mb / geometry.widthMbs), samples);
    w.bytes(samples);
  }
  return nalUnit(NAL_IDR_SLICE, 3, w.trailingBits().finish());
}
