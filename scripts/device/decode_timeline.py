#!/usr/bin/env python3
"""Block timelines of the decode attention kernels.

  decode_timeline.py patch OUT.cu [SRC.cu]   instrumented copy of kernels/paged_attention_decode.cu
  decode_timeline.py summarize TIMES         per launch shape: medians over its launches

The patched file records, per block of decode_tc_kernel / decode_kernel, %smid and %globaltimer at
entry, when its first page landed (tensor-core kernel), at the end of its page loop and at exit, and
per block of decode_combine_kernel its entry and exit. When KVG_TIMES names a file, decode_attention
synchronizes after each launch and appends the marks there (relative to the launch's first block), so
the variant's own bench times are not the kernel's: read the marks, not the table. Build it with
scripts/device/kernel-variant, e.g.
  scripts/device/decode_timeline.py patch /tmp/decode_times.cu
  scripts/device/kernel-variant times paged_attention_decode.cu /tmp/decode_times.cu
then on the GPU machine
  KVG_TIMES=$OUT/t.txt times-bench --no-model --reps 3 --launches 1 --formats fp8_e4m3 --decode-kernels tensor_core
  decode_timeline.py summarize $OUT/t.txt
"""
import collections
import statistics as st
import sys
from pathlib import Path

FORMATS = ['bf16', 'fp16', 'e4m3', 'e5m2', 'fp8pth', 'int8pth', 'int4pth', 'nvfp4', 'q8_0', 'q4_0', 'tqk8v4',
           'tqk4v4', 'tqk3v4', 'tqk3v3']  # the order of Fmt in paged_attention_decode.cu

DEVICE = r'''
#include <cstdio>
#include <cstdlib>
#include <vector>
// decode_timeline.py: per block smid, entry, first page landed, page loop done, exit (globaltimer ns)
__device__ unsigned long long kvg_t[8192][5];
__device__ unsigned long long kvg_c[2048][3];  // the split merge: smid, entry, exit
__device__ __forceinline__ unsigned long long kvg_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned long long kvg_smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}
__device__ __forceinline__ int kvg_bid() { return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z); }
#define KVG_MARK(k)                                                      \
  do {                                                                   \
    if (threadIdx.x == 0 && kvg_bid() < 8192) {                          \
      kvg_t[kvg_bid()][k] = kvg_now();                                   \
      if ((k) == 1) kvg_t[kvg_bid()][0] = kvg_smid();                    \
    }                                                                    \
  } while (0)
'''

HOST_CLEAR = '''
  {  // decode_timeline.py: clear the marks (asynchronously: back-to-back launches stay back to back)
    void* p = nullptr;
    KV_CUDA_CHECK(cudaGetSymbolAddress(&p, kvg_t));
    KV_CUDA_CHECK(cudaMemsetAsync(p, 0, sizeof(kvg_t), s));
    KV_CUDA_CHECK(cudaGetSymbolAddress(&p, kvg_c));
    KV_CUDA_CHECK(cudaMemsetAsync(p, 0, sizeof(kvg_c), s));
  }
'''

HOST_DUMP = '''
  if (const char* path = std::getenv("KVG_TIMES")) {  // decode_timeline.py
    KV_CUDA_CHECK(cudaDeviceSynchronize());
    const int nb = splits * a.kv_heads * parts * a.num_tiles, nc = a.num_tiles * a.kv_heads * parts;
    std::vector<unsigned long long> t(8192 * 5), cc(2048 * 3);
    KV_CUDA_CHECK(cudaMemcpyFromSymbol(t.data(), kvg_t, t.size() * 8));
    KV_CUDA_CHECK(cudaMemcpyFromSymbol(cc.data(), kvg_c, cc.size() * 8));
    unsigned long long t0 = ~0ull;
    for (int b = 0; b < nb && b < 8192; ++b)
      if (t[b * 5 + 1]) t0 = std::min(t0, t[b * 5 + 1]);
    auto rel = [&](unsigned long long x) { return x ? static_cast<long long>(x - t0) : -1ll; };
    FILE* fp = std::fopen(path, "a");
    std::fprintf(fp, "L %d %d %d %d %d %d\\n", static_cast<int>(f), nb, nc, splits, a.num_tiles, a.max_ctx);
    for (int b = 0; b < nb && b < 8192; ++b)
      std::fprintf(fp, "B %llu %lld %lld %lld %lld\\n", t[b * 5], rel(t[b * 5 + 1]), rel(t[b * 5 + 2]), rel(t[b * 5 + 3]),
                   rel(t[b * 5 + 4]));
    for (int b = 0; b < nc && b < 2048; ++b) std::fprintf(fp, "C %llu %lld %lld\\n", cc[b * 3], rel(cc[b * 3 + 1]), rel(cc[b * 3 + 2]));
    std::fclose(fp);
  }
'''


def patch(out, src):
    s = Path(src).read_text()

    def sub(old, new, start=0):
        i = s.find(old, start)
        if i < 0:
            sys.exit(f'decode_timeline.py: {src} no longer holds {old.strip()[:70]!r}: update the anchors')
        return s[:i] + new + s[i + len(old):]

    s = sub('#include "kernels/softmax_exp.cuh"\n', '#include "kernels/softmax_exp.cuh"\n' + DEVICE)
    # the tensor-core kernel: entry, first page, loop end, exit
    i = s.index('decode_tc_kernel(KvLayerCodec c, PagedAttentionArgs a) {')
    s = sub('  pdl_launch_dependents();\n', '  KVG_MARK(1);\n  pdl_launch_dependents();\n', i)
    s = sub('    mbar_wait(&ring_full[it % kStages], (it / kStages) & 1);\n',
            '    mbar_wait(&ring_full[it % kStages], (it / kStages) & 1);\n    if (it == 0) KVG_MARK(2);\n', i)
    s = sub('  __syncthreads();  // every warp is done with the ring', '  KVG_MARK(3);\n  __syncthreads();  // every warp is done with the ring', i)
    s = sub('  finish_block<F>(c, a, w, wacc);\n}', '  finish_block<F>(c, a, w, wacc);\n  KVG_MARK(4);\n}', i)
    # the CUDA-core kernel: entry and exit
    i = s.index('decode_kernel(KvLayerCodec c, PagedAttentionArgs a) {')
    s = sub('decode_kernel(KvLayerCodec c, PagedAttentionArgs a) {\n', 'decode_kernel(KvLayerCodec c, PagedAttentionArgs a) {\n  KVG_MARK(1);\n', i - 1)
    s = sub('  finish_block<F>(c, a, w, wacc);\n}', '  finish_block<F>(c, a, w, wacc);\n  KVG_MARK(4);\n}', i)
    # the split merge
    i = s.index('decode_combine_kernel(PagedAttentionArgs a, int splits) {')
    s = sub('  pdl_launch_dependents();\n', '''  const int kvg_cb = blockIdx.x + gridDim.x * blockIdx.y;
  if (threadIdx.x == 0 && kvg_cb < 2048) kvg_c[kvg_cb][0] = kvg_smid(), kvg_c[kvg_cb][1] = kvg_now();
  pdl_launch_dependents();
''', i)
    j = s.index('\n}\n', i)
    s = s[:j] + '\n  __syncthreads();\n  if (threadIdx.x == 0 && kvg_cb < 2048) kvg_c[kvg_cb][2] = kvg_now();' + s[j:]
    # the host side
    i = s.index('void decode_attention(const KvLayerCodec& c')
    s = sub('  switch (f) {\n', HOST_CLEAR + '  switch (f) {\n', i)
    i = s.index('launch_kernel(a.pdl, decode_combine_kernel', i)
    j = s.index('\n', i)
    s = s[:j + 1] + HOST_DUMP + s[j + 1:]
    Path(out).write_text(s)


def summarize(path):
    launches, cur = [], None
    for line in open(path):
        p = line.split()
        if p[0] == 'L':
            cur = {'hdr': list(map(int, p[1:])), 'B': [], 'C': []}
            launches.append(cur)
        elif p[0] == 'B':
            cur['B'].append(list(map(int, p[1:])))
        else:
            cur['C'].append(list(map(int, p[1:])))
    us = lambda x: x / 1000.0
    groups = collections.OrderedDict()
    for L in launches:
        f, nb, _, sp, _, mc = L['hdr']
        B = [b for b in L['B'] if b[1] >= 0 and b[4] >= 0]
        C = [c for c in L['C'] if c[1] >= 0]
        ends = sorted(b[4] for b in B)
        first = [b[2] - b[1] for b in B if b[2] >= 0]
        loop = [b[3] - b[2] for b in B if b[2] >= 0]
        per_sm = collections.defaultdict(list)  # the SM's blocks in dispatch (index) order
        for b in B:
            per_sm[b[0]].append(b[4] - b[1])
        rank = collections.defaultdict(list)
        for durs in per_sm.values():
            for r, d in enumerate(durs):
                rank[(len(durs), r)].append(d)
        r = {
            'blocks': len(B), 'per_sm': max(len(v) for v in per_sm.values()),
            'first': us(st.median(first)) if first else float('nan'),
            'loop': us(st.median(loop)) if loop else float('nan'),
            'dur': (us(min(b[4] - b[1] for b in B)), us(st.median(b[4] - b[1] for b in B)), us(max(b[4] - b[1] for b in B))),
            'end': (us(ends[len(ends) // 10]), us(ends[len(ends) // 2]), us(ends[-1])),
            'gap': us(min(c[1] for c in C) - ends[-1]) if C else float('nan'),
            'merge': us(max(c[2] for c in C) - min(c[1] for c in C)) if C else float('nan'),
            'total': us(max(c[2] for c in C)) if C else us(ends[-1]),
            'rank': ' '.join('%d/%d:%.1f' % (r + 1, n, us(st.mean(v))) for (n, r), v in sorted(rank.items()) if len(v) >= 4),
        }
        groups.setdefault((FORMATS[f], mc, sp, nb), []).append(r)
    print('us after the launch\'s first block started; medians over launches (the first one left out)')
    for (f, mc, sp, nb), rs in groups.items():
        rs = rs[1:] if len(rs) > 1 else rs
        med = lambda k: st.median(x[k] for x in rs)
        medt = lambda k, i: st.median(x[k][i] for x in rs)
        print(f'{f:8} ctx {mc:6} splits {sp:3} blocks {nb:4} (<= {rs[0]["per_sm"]} an SM) | first page {med("first"):.1f} '
              f'loop {med("loop"):.1f} | block min/med/max {medt("dur", 0):.1f}/{medt("dur", 1):.1f}/{medt("dur", 2):.1f} | '
              f'ends p10/med/max {medt("end", 0):.1f}/{medt("end", 1):.1f}/{medt("end", 2):.1f} | merge gap {med("gap"):.1f} '
              f'span {med("merge"):.1f} | total {med("total"):.1f}')
        print(f'         block time by its place among its SM\'s blocks (place/blocks:us): {rs[-1]["rank"]}')


if __name__ == '__main__':
    if len(sys.argv) >= 3 and sys.argv[1] == 'patch':
        patch(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else str(Path(__file__).resolve().parents[2] / 'kernels/paged_attention_decode.cu'))
    elif len(sys.argv) >= 3 and sys.argv[1] == 'summarize':
        summarize(sys.argv[2])
    else:
        sys.exit(__doc__)
