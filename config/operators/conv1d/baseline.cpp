// Baseline conv1d: oneDNN 2.6 convolution_forward on the caller's buffers in
// their plain layouts (ncw source/destination, oiw weights, strides as given),
// bias fused, forward_inference. The engine, stream and primitive are created
// and destroyed on every call, since a kernel keeps no state across calls;
// oneDNN's own primitive cache (on by default) makes the re-creation cheap
// after the first call. oneDNN here uses the OpenMP runtime, so the OpenMP
// thread count is set to args->num_threads for the call and restored after.
#include <omp.h>
#include <cstdint>
#include <dnnl.hpp>
#include "kevolve/abi.h"

namespace {
dnnl::memory::desc plain_desc(const kv_tensor& t) {
  dnnl::memory::dims dims(t.dims, t.dims + t.rank);
  dnnl::memory::dims strides(t.strides, t.strides + t.rank);
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

int run(const kv_args* a) {
  using namespace dnnl;
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& w = a->inputs[1];
  const kv_tensor& bias = a->inputs[2];
  const kv_tensor& y = a->outputs[0];
  const memory::dim pad = kv_param_i(a, 0);

  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  const memory::desc x_md = plain_desc(x), w_md = plain_desc(w), b_md = plain_desc(bias),
                     y_md = plain_desc(y);
  convolution_forward::desc desc(prop_kind::forward_inference, algorithm::convolution_direct,
                                 x_md, w_md, b_md, y_md, {1}, {pad}, {pad});
  convolution_forward::primitive_desc pd(desc, eng);
  // The primitive may want other layouts than the plain ones given; it then
  // reports formats that differ from ours and we refuse rather than mis-read.
  if (pd.src_desc() != x_md || pd.weights_desc() != w_md || pd.dst_desc() != y_md)
    return KV_ERR_UNSUPPORTED;
  memory x_mem(x_md, eng, x.data), w_mem(w_md, eng, w.data), b_mem(b_md, eng, bias.data),
      y_mem(y_md, eng, y.data);
  convolution_forward(pd).execute(strm, {{DNNL_ARG_SRC, x_mem},
                                         {DNNL_ARG_WEIGHTS, w_mem},
                                         {DNNL_ARG_BIAS, b_mem},
                                         {DNNL_ARG_DST, y_mem}});
  strm.wait();
  return KV_OK;
}
}  // namespace

extern "C" int kevolve_kernel(const kv_args* a) {
  for (int i = 0; i < 4; ++i)
    if ((i < 3 ? a->inputs[i] : a->outputs[0]).dtype != KV_F32) return KV_ERR_UNSUPPORTED;
  const int saved_threads = omp_get_max_threads();
  omp_set_num_threads(a->num_threads);
  int status = KV_ERR_INTERNAL;
  try {
    status = run(a);
  } catch (const dnnl::error&) {
    status = KV_ERR_INTERNAL;
  }
  omp_set_num_threads(saved_threads);
  return status;
}
