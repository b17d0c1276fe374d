#!/usr/bin/env python3
"""How often glibc's libm and its libmvec variants (SSE _ZGVb, AVX2 _ZGVd, AVX-512 _ZGVe) give
different bits for the same input: the measurement behind codegen_cpu/llvm_math.h's rule that
every evaluation of a math function goes through one libmvec function.

Writes a C program into a temporary directory, compiles it with gcc and runs it on an AVX-512
host: for each function and dtype, 3.2M random inputs (a quarter of them repeated across the
lanes), counting the inputs where two implementations disagree. Usage: tools/libmvec_agreement.py
"""
import os
import subprocess
import tempfile

fns1 = "exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh erf erfc".split()
fns2 = "pow atan2 hypot".split()
out = ['#include <immintrin.h>', '#include <math.h>', '#include <stdio.h>', '#include <stdint.h>', '#include <string.h>', '#include <stdlib.h>']
def decl(name, ar, f32):
    s = name + ('f' if f32 else '')
    ps = lambda t: ', '.join([t]*ar)
    if f32:
        out.append(f'__m128 _ZGVbN4{"v"*ar}_{s}({ps("__m128")}); __m256 _ZGVdN8{"v"*ar}_{s}({ps("__m256")}); __m512 _ZGVeN16{"v"*ar}_{s}({ps("__m512")});')
    else:
        out.append(f'__m128d _ZGVbN2{"v"*ar}_{s}({ps("__m128d")}); __m256d _ZGVdN4{"v"*ar}_{s}({ps("__m256d")}); __m512d _ZGVeN8{"v"*ar}_{s}({ps("__m512d")});')
for f in fns1:
    for f32 in (0,1): decl(f,1,f32)
for f in fns2:
    for f32 in (0,1): decl(f,2,f32)
out.append('static double rnd(uint64_t*s){*s^=*s<<13;*s^=*s>>7;*s^=*s<<17; return (double)(*s>>11)/9007199254740992.0;}')
out.append('__attribute__((target("avx512f"))) int main(){ uint64_t st=88172645463325252ull;')
def body(name, ar, f32, lo, hi):
    s = name + ('f' if f32 else '')
    T = 'float' if f32 else 'double'
    n = (4,8,16) if f32 else (2,4,8)
    suf = '' if f32 else 'd'
    pfx = ('_mm','_mm256','_mm512')
    lines = [f'{{ long db=0,dd=0,de=0,bd=0,be=0; for(int it=0;it<200000;it++){{ {T} a[16],c[16]; for(int i=0;i<16;i++){{a[i]=({T})({lo}+({hi}-({lo}))*rnd(&st)); c[i]=({T})({lo}+({hi}-({lo}))*rnd(&st)); if(it%4==0) a[i]=a[0];}}']
    lines.append(f'{T} rs[16],rb[16],rd[16],re[16]; for(int i=0;i<16;i++) rs[i]={s}(a[i]{",c[i]" if ar==2 else ""});')
    for k,(isa,pf) in enumerate(zip('bde',pfx)):
        lanes=n[k]; reg=('__m128','__m256','__m512')[k]+suf
        arr='r'+isa
        args = f'{pf}_loadu_p{"s" if f32 else "d"}(a+j)' + (f', {pf}_loadu_p{"s" if f32 else "d"}(c+j)' if ar==2 else '')
        lines.append(f'for(int j=0;j<16;j+={lanes}){{ {reg} v=_ZGV{isa}N{lanes}{"v"*ar}_{s}({args}); {pf}_storeu_p{"s" if f32 else "d"}({arr}+j,v);}}')
    lines.append('for(int i=0;i<16;i++){ if(memcmp(&rs[i],&rb[i],sizeof rs[i]))db++; if(memcmp(&rs[i],&rd[i],sizeof rs[i]))dd++; if(memcmp(&rs[i],&re[i],sizeof rs[i]))de++; if(memcmp(&rb[i],&rd[i],sizeof rs[i]))bd++; if(memcmp(&rb[i],&re[i],sizeof rs[i]))be++;}}')
    lines.append(f'printf("%-8s %s libm!=b %ld libm!=d %ld libm!=e %ld b!=d %ld b!=e %ld\\n","{s}","{T}",db,dd,de,bd,be); }}')
    out.append('\n'.join(lines))
rng = {'asin':(-1,1),'acos':(-1,1),'atanh':(-0.99,0.99),'acosh':(1,50),'log':(0.001,100),'log2':(0.001,100),'log10':(0.001,100),'log1p':(-0.9,100),'pow':(0.01,10)}
for f in fns1+fns2:
    lo,hi = rng.get(f,(-10,10))
    for f32 in (0,1): body(f, 2 if f in fns2 else 1, f32, lo, hi)
out.append('return 0;}')
with tempfile.TemporaryDirectory() as d:
    c = os.path.join(d, 't.c')
    with open(c, 'w') as f:
        f.write('\n'.join(out))
    exe = os.path.join(d, 't')
    subprocess.run(['gcc', '-O1', '-mavx512f', '-mfma', c, '-o', exe, '-lmvec', '-lm'], check=True)
    subprocess.run([exe], check=True)
