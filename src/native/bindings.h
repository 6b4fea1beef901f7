// One bind_* function per concern, each in its own bind_<concern>.cpp and
// called once from NB_MODULE in module.cpp. To expose a new concern: write
// its logic in files named for it (free of Python where it can be), add
// bind_<concern>.cpp defining `void bind_<concern>(nb::module_& m)`, declare
// it here and call it from module.cpp.
#pragma once
#include <nanobind/nanobind.h>

namespace tfrx {
namespace py {

void bind_results(nanobind::module_& m);    // the named results other bindings return (results.h)
void bind_crc32c(nanobind::module_& m);     // crc32c, masked CRCs, backend
void bind_allocator(nanobind::module_& m);  // glibc malloc thresholds
void bind_framing(nanobind::module_& m);    // scan / frame / split / gather records
void bind_shuffle(nanobind::module_& m);    // the window shuffle's draws
void bind_codec(nanobind::module_& m);      // decode_example, encode_examples, ...
void bind_parser(nanobind::module_& m);     // ParserCore and its specs, results, errors
void bind_split_choice(nanobind::module_& m);  // SplitChoice: threads for memory-bound copies, measured
void bind_index(nanobind::module_& m);      // gather_records through an index
void bind_image(nanobind::module_& m);      // resize kernels
void bind_inflate(nanobind::module_& m);    // checkpointed GZIP/ZLIB inflate
void bind_presence(nanobind::module_& m);   // feature_presence: keys, kinds and counts per record
void bind_jpeg(nanobind::module_& m);       // decode_and_crop_jpeg and the fused crop-and-resize

}  // namespace py
}  // namespace tfrx
