// Every KV-format codec (__host__ __device__), for CUDA kernels and their CPU twins.
#pragma once
#include "codec_bytes.h"
#include "codec_fp8_per_tensor.h"
#include "codec_ggml.h"
#include "codec_kivi.h"
#include "codec_nvfp4.h"
#include "codec_per_token_head.h"
#include "codec_turboquant.h"
#include "float_formats.h"
#include "fp8_formats.h"
#include "hadamard.h"
