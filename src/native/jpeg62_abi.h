// The libjpeg version-6.2 application binary interface, as exported by every
// libjpeg-turbo built with its default (jpeg62) API: the structures an
// application allocates and the fields it reads or sets, so that tfrx can
// call a libjpeg-turbo loaded at run time (jpeg_partial.cpp) without its
// headers at build time. Field order and types follow jpeglib.h of the
// Independent JPEG Group's software (release 6b) as kept by libjpeg-turbo;
// the library itself checks the layout: jpeg_CreateDecompress fails unless
// the version (62) and sizeof(jpeg_decompress_struct) agree with its own.
#pragma once

#include <cstddef>

namespace tfrx::jpeg62 {

using boolean = int;
using JDIMENSION = unsigned int;
using JSAMPLE = unsigned char;
using JSAMPROW = JSAMPLE*;
using JSAMPARRAY = JSAMPROW*;
using JOCTET = unsigned char;
using UINT8 = unsigned char;
using UINT16 = unsigned short;

constexpr int kLibVersion = 62;
constexpr int kDctSize2 = 64;
constexpr int kNumQuantTables = 4;
constexpr int kNumHuffTables = 4;
constexpr int kNumArithTables = 16;
constexpr int kMaxCompsInScan = 4;
constexpr int kMaxBlocksInMcu = 10;
constexpr int kMessageLengthMax = 200;

// J_COLOR_SPACE and J_DCT_METHOD values (enums are int-sized in the ABI).
enum ColorSpace : int { JCS_UNKNOWN = 0, JCS_GRAYSCALE = 1, JCS_RGB = 2, JCS_YCbCr = 3, JCS_CMYK = 4, JCS_YCCK = 5 };
enum DctMethod : int { JDCT_ISLOW = 0, JDCT_IFAST = 1, JDCT_FLOAT = 2 };

struct jpeg_common_struct;
struct jpeg_decompress_struct;
using j_common_ptr = jpeg_common_struct*;
using j_decompress_ptr = jpeg_decompress_struct*;

struct jpeg_error_mgr {
  void (*error_exit)(j_common_ptr cinfo);
  void (*emit_message)(j_common_ptr cinfo, int msg_level);
  void (*output_message)(j_common_ptr cinfo);
  void (*format_message)(j_common_ptr cinfo, char* buffer);
  void (*reset_error_mgr)(j_common_ptr cinfo);
  int msg_code;
  union {
    int i[8];
    char s[80];
  } msg_parm;
  int trace_level;
  long num_warnings;
  const char* const* jpeg_message_table;
  int last_jpeg_message;
  const char* const* addon_message_table;
  int first_addon_message;
  int last_addon_message;
};

struct jpeg_source_mgr {
  const JOCTET* next_input_byte;
  size_t bytes_in_buffer;
  void (*init_source)(j_decompress_ptr cinfo);
  boolean (*fill_input_buffer)(j_decompress_ptr cinfo);
  void (*skip_input_data)(j_decompress_ptr cinfo, long num_bytes);
  boolean (*resync_to_restart)(j_decompress_ptr cinfo, int desired);
  void (*term_source)(j_decompress_ptr cinfo);
};

struct jpeg_component_info {
  int component_id;
  int component_index;
  int h_samp_factor;
  int v_samp_factor;
  int quant_tbl_no;
  int dc_tbl_no;
  int ac_tbl_no;
  JDIMENSION width_in_blocks;
  JDIMENSION height_in_blocks;
  int DCT_scaled_size;
  JDIMENSION downsampled_width;
  JDIMENSION downsampled_height;
  boolean component_needed;
  int MCU_width;
  int MCU_height;
  int MCU_blocks;
  int MCU_sample_width;
  int last_col_width;
  int last_row_height;
  void* quant_table;
  void* dct_table;
};

#define TFRX_JPEG_COMMON_FIELDS \
  jpeg_error_mgr* err;          \
  void* mem;                    \
  void* progress;               \
  void* client_data;            \
  boolean is_decompressor;      \
  int global_state

struct jpeg_common_struct {
  TFRX_JPEG_COMMON_FIELDS;
};

struct jpeg_decompress_struct {
  TFRX_JPEG_COMMON_FIELDS;
  jpeg_source_mgr* src;
  JDIMENSION image_width;
  JDIMENSION image_height;
  int num_components;
  int jpeg_color_space;
  int out_color_space;
  unsigned int scale_num, scale_denom;
  double output_gamma;
  boolean buffered_image;
  boolean raw_data_out;
  int dct_method;
  boolean do_fancy_upsampling;
  boolean do_block_smoothing;
  boolean quantize_colors;
  int dither_mode;
  boolean two_pass_quantize;
  int desired_number_of_colors;
  boolean enable_1pass_quant;
  boolean enable_external_quant;
  boolean enable_2pass_quant;
  JDIMENSION output_width;
  JDIMENSION output_height;
  int out_color_components;
  int output_components;
  int rec_outbuf_height;
  int actual_number_of_colors;
  JSAMPARRAY colormap;
  JDIMENSION output_scanline;
  int input_scan_number;
  JDIMENSION input_iMCU_row;
  int output_scan_number;
  JDIMENSION output_iMCU_row;
  int (*coef_bits)[kDctSize2];
  void* quant_tbl_ptrs[kNumQuantTables];
  void* dc_huff_tbl_ptrs[kNumHuffTables];
  void* ac_huff_tbl_ptrs[kNumHuffTables];
  int data_precision;
  jpeg_component_info* comp_info;
  boolean progressive_mode;
  boolean arith_code;
  UINT8 arith_dc_L[kNumArithTables];
  UINT8 arith_dc_U[kNumArithTables];
  UINT8 arith_ac_K[kNumArithTables];
  unsigned int restart_interval;
  boolean saw_JFIF_marker;
  UINT8 JFIF_major_version;
  UINT8 JFIF_minor_version;
  UINT8 density_unit;
  UINT16 X_density;
  UINT16 Y_density;
  boolean saw_Adobe_marker;
  UINT8 Adobe_transform;
  boolean CCIR601_sampling;
  void* marker_list;
  int max_h_samp_factor;
  int max_v_samp_factor;
  int min_DCT_scaled_size;
  JDIMENSION total_iMCU_rows;
  JSAMPLE* sample_range_limit;
  int comps_in_scan;
  jpeg_component_info* cur_comp_info[kMaxCompsInScan];
  JDIMENSION MCUs_per_row;
  JDIMENSION MCU_rows_in_scan;
  int blocks_in_MCU;
  int MCU_membership[kMaxBlocksInMcu];
  int Ss, Se, Ah, Al;
  int unread_marker;
  void* master;
  void* main;
  void* coef;
  void* post;
  void* inputctl;
  void* marker;
  void* entropy;
  void* idct;
  void* upsample;
  void* cconvert;
  void* cquantize;
};

#undef TFRX_JPEG_COMMON_FIELDS

}  // namespace tfrx::jpeg62
