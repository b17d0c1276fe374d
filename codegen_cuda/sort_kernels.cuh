// kiln/codegen_cuda/sort_kernels.cuh — the device sort's two kernels, as CUDA C inside a macro.
//
// Included by codegen_cuda/cuda_sort_source.cpp with KILN_SORT_KERNELS defined to stringify its
// argument, which makes the text below the source NVRTC compiles (after a prefix that defines
// KEY, KILN_KERNEL, KILN_DEVICE and KILN_SMEM), and by test/test_cuda_sort.cpp with it defined
// to paste the text as host C++, whose emulation of blocks, threads and __syncthreads runs the
// same kernels on the CPU. So the text keeps to what both read: no preprocessor lines, no
// string or character literals, and parentheses in pairs.
//
// The order is argsort's (runtime/cpu/extern_sort.cpp): numbers ascending, or descending, and
// NaNs after them ascending and before them descending, equal keys (NaNs among themselves, and
// -0.0 with 0.0) in the order of their positions. That is a strict total order on (key,
// position), so any correct sort under it gives the stable sort's result: kiln_before is the
// whole definition, used by both kernels.
//
// kiln_sort_tiles: one block sorts `per_block` tiles of `tile` (a power of two) consecutive
// elements of a line each (several lines' only tile when lines are short, else one tile) with a
// bitonic network in shared memory: per_block * tile / 2 compare-exchanges per step, one step
// between barriers. The network's stages stop at the tile's size, so the tiles stay apart, and
// the last stage sorts every tile ascending. A line's last tile is padded with entries of
// position -1, which sort after every element and are not written back. kiln_sort_merge: every element of a line moves
// to its place in the merge of its run of `width` sorted elements with the neighbouring run:
// its position in its own run plus the number of the other run's elements before it (a binary
// search). Runs double until one covers the line.
KILN_SORT_KERNELS(

KILN_DEVICE bool kiln_before(KEY a, long long ia, KEY b, long long ib, int desc) {
  if (ia < 0 || ib < 0) return ib < 0 && ia >= 0;
  const bool na = a != a, nb = b != b;
  if (na != nb) return desc ? na : nb;
  if (!na) {
    if (a < b) return !desc;
    if (b < a) return desc;
  }
  return ia < ib;
}

KILN_KERNEL kiln_sort_tiles(const KEY* in, long long n, long long lines, long long tiles, int tile, int per_block, int desc,
                            KEY* keys_out, long long* index_out) {
  KILN_SMEM(smem);
  const int slots = tile * per_block;
  long long* idx = (long long*)smem;
  KEY* key = (KEY*)(smem + (long long)slots * 8);
  for (int s = threadIdx.x; s < slots; s += blockDim.x) {
    const long long unit = (long long)blockIdx.x * per_block + s / tile;
    const long long line = unit / tiles;
    const long long p = (unit % tiles) * tile + s % tile;
    if (line < lines && p < n) {
      key[s] = in[line * n + p];
      idx[s] = p;
    } else {
      key[s] = (KEY)0;
      idx[s] = -1;
    }
  }
  __syncthreads();
  for (int size = 2; size <= tile; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      for (int t = threadIdx.x; t < slots / 2; t += blockDim.x) {
        const int i = 2 * stride * (t / stride) + t % stride;
        const int j = i + stride;
        const bool up = size == tile || (i & size) == 0;
        if (kiln_before(key[j], idx[j], key[i], idx[i], desc) == up) {
          const KEY k = key[i];
          key[i] = key[j];
          key[j] = k;
          const long long x = idx[i];
          idx[i] = idx[j];
          idx[j] = x;
        }
      }
      __syncthreads();
    }
  }
  for (int s = threadIdx.x; s < slots; s += blockDim.x) {
    const long long unit = (long long)blockIdx.x * per_block + s / tile;
    const long long line = unit / tiles;
    const long long p = (unit % tiles) * tile + s % tile;
    if (line < lines && p < n) {
      keys_out[line * n + p] = key[s];
      index_out[line * n + p] = idx[s];
    }
  }
}

KILN_KERNEL kiln_sort_merge(const KEY* keys_in, const long long* index_in, long long n, long long lines, long long width,
                            int desc, KEY* keys_out, long long* index_out) {
  const long long total = lines * n;
  const long long step = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
    const long long base = e - e % n;
    const long long p = e - base;
    const long long run = p / width;
    const long long start = (run - run % 2) * width;
    const long long mid = start + width;
    const long long end = mid + width < n ? mid + width : n;
    const KEY k = keys_in[e];
    const long long id = index_in[e];
    long long to = p;
    if (mid < n) {
      const bool left = run % 2 == 0;
      long long lo = left ? mid : start;
      long long hi = left ? end : mid;
      while (lo < hi) {
        const long long m = lo + (hi - lo) / 2;
        if (kiln_before(keys_in[base + m], index_in[base + m], k, id, desc))
          lo = m + 1;
        else
          hi = m;
      }
      to = left ? p + (lo - mid) : start + (p - mid) + (lo - start);
    }
    keys_out[base + to] = k;
    index_out[base + to] = id;
  }
}

)
