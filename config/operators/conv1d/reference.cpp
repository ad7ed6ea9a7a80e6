// Reference conv1d: fp64, stride 1, zero padding, plain loops.
#include <cstdint>
#include "kevolve/abi.h"

extern "C" int kevolve_kernel(const kv_args* a) {
  const kv_tensor& x = a->inputs[0];
  const kv_tensor& w = a->inputs[1];
  const kv_tensor& bias = a->inputs[2];
  const kv_tensor& y = a->outputs[0];
  const int64_t nb = x.dims[0], cin = x.dims[1], len = x.dims[2];
  const int64_t cout = w.dims[0], kw = w.dims[2];
  const int64_t lout = y.dims[2];
  const int64_t pad = kv_param_i(a, 0);
  const double* xp = static_cast<const double*>(x.data);
  const double* wp = static_cast<const double*>(w.data);
  const double* bp = static_cast<const double*>(bias.data);
  double* yp = static_cast<double*>(y.data);
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t o = 0; o < cout; ++o)
      for (int64_t l = 0; l < lout; ++l) {
        double s = bp[o * bias.strides[0]];
        for (int64_t c = 0; c < cin; ++c)
          for (int64_t k = 0; k < kw; ++k) {
            const int64_t j = l + k - pad;
            if (j < 0 || j >= len) continue;
            s += wp[o * w.strides[0] + c * w.strides[1] + k * w.strides[2]] *
                 xp[b * x.strides[0] + c * x.strides[1] + j * x.strides[2]];
          }
        yp[b * y.strides[0] + o * y.strides[1] + l * y.strides[2]] = s;
      }
  return KV_OK;
}
