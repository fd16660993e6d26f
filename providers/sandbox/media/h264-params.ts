import { BitWriter } from './bit-writer.ts';
import { NAL_PPS, NAL_SPS, nalUnit } from './h264-nal.ts';

/**
 * Sequence and picture parameter sets for an intra-only Constrained Baseline stream
 * (ITU-T H.264 §7.3.2.1.1, §7.3.2.2, Annex A).
 */
export const PROFILE_BASELINE = 66;
/** constraint_set0_flag (Baseline-conformant) + constraint_set1_flag (Constrained Baseline). */
export const CONSTRAINT_FLAGS = 0xc0;
/** frame_num is always 0 (every picture is an IDR), so the minimum 4 bits suffice. */
export const LOG2_MAX_FRAME_NUM = 4;

export interface FrameGeometry {
  width: number; // displayed luma width, even
  height: number; // displayed luma height, even
  widthMbs: number;
  heightMbs: number;
}

/** Macroblock grid covering an even-sized frame; the excess is cropped away in the SPS. */
export function frameGeometry(width: number, height: number): FrameGeometry {
  if (width % 2 || height % 2 || width < 2 || height < 2)
    throw new RangeError(`4:2:0 frames need even sizes, got ${width}x${height}`);
  return { width, height, widthMbs: Math.ceil(width / 16), heightMbs: Math.ceil(height / 16) };
}

/** Table A-1 rows: level_idc, MaxMBPS, MaxFS (MBs), MaxBR (kbit/s; ×1000 bits for Baseline). */
const LEVELS: ReadonlyArray<readonly [number, number, number, number]> = [
  [10, 1485, 99, 64],
  [11, 3000, 396, 192],
  [12, 6000, 396, 384],
  [13, 11880, 396, 768],
  [20, 11880, 396, 2000],
  [21, 19800, 792, 4000],
  [22, 20250, 1620, 4000],
  [30, 40500, 1620, 10000],
  [31, 108000, 3600, 14000],
  [32, 216000, 5120, 20000],
  [40, 245760, 8192, 20000],
  [41, 245760, 8192, 50000],
  [42, 522240, 8704, 50000],
  [50, 589824, 22080, 135000],
  [51, 983040, 36864, 240000],
  [52, 2073600, 36864, 240000],
];

/**
 * The lowest level whose frame size, macroblock rate and bit rate admit the stream. I_PCM is
 * uncompressed, so the bit rate is usually what decides.
 */
export function chooseLevel(geometry: FrameGeometry, fps: number, bitsPerSecond: number): number {
  const frameMbs = geometry.widthMbs * geometry.heightMbs;
  const row = LEVELS.find(([, mbps, fs, br]) => fs >= frameMbs && mbps >= frameMbs * fps && br * 1000 >= bitsPerSecond);
  return row?.[0] ?? 52;
}

export function spsNal(geometry: FrameGeometry, levelIdc: number): Uint8Array {
  const w = new BitWriter();
  w.u(8, PROFILE_BASELINE).u(8, CONSTRAINT_FLAGS).u(8, levelIdc);
  w.ue(0); // seq_parameter_set_id
  w.ue(LOG2_MAX_FRAME_NUM - 4); // log2_max_frame_num_minus4
  w.ue(2); // pic_order_cnt_type 2: output order = decoding order, no POC syntax in slices
  w.ue(1); // max_num_ref_frames (IDRs are still marked as references)
  w.u(1, 0); // gaps_in_frame_num_value_allowed_flag
  w.ue(geometry.widthMbs - 1); // pic_width_in_mbs_minus1
  w.ue(geometry.heightMbs - 1); // pic_height_in_map_units_minus1
  w.u(1, 1); // frame_mbs_only_flag
  w.u(1, 1); // direct_8x8_inference_flag
  // Cropping is in units of 2 luma samples for 4:2:0 progressive video (§7.4.2.1.1, CropUnitX/Y).
  const cropRight = (geometry.widthMbs * 16 - geometry.width) / 2;
  const cropBottom = (geometry.heightMbs * 16 - geometry.height) / 2;
  const cropping = cropRight > 0 || cropBottom > 0;
  w.u(1, cropping ? 1 : 0);
  if (cropping) w.ue(0).ue(cropRight).ue(0).ue(cropBottom); // left, right, top, bottom
  w.u(1, 0); // vui_parameters_present_flag: timing comes from the MP4 container
  return nalUnit(NAL_SPS, 3, w.trailingBits().finish());
}

export function ppsNal(): Uint8Array {
  const w = new BitWriter();
  w.ue(0); // pic_parameter_set_id
  w.ue(0); // seq_parameter_set_id
  w.u(1, 0); // entropy_coding_mode_flag: CAVLC (Baseline has no CABAC)
  w.u(1, 0); // bottom_field_pic_order_in_frame_present_flag
  w.ue(0); // num_slice_groups_minus1
  w.ue(0).ue(0); // num_ref_idx_l0/l1_default_active_minus1
  w.u(1, 0).u(2, 0); // weighted_pred_flag, weighted_bipred_idc
  w.se(0).se(0).se(0); // pic_init_qp_minus26, pic_init_qs_minus26, chroma_qp_index_offset
  w.u(1, 1); // deblocking_filter_control_present_flag, so slices can switch the filter off
  w.u(1, 0); // constrained_intra_pred_flag
  w.u(1, 0); // redundant_pic_cnt_present_flag
  return nalUnit(NAL_PPS, 3, w.trailingBits().finish());
}
