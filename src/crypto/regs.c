/* wks__wipe_registers() (crypto.h), the same on every backend. */
#include "crypto/crypto.h"

#include <pthread.h>

/*
 * Zero the vector registers.  memcpy, SHA-512 and AES leave the bytes they
 * moved in xmm/ymm/zmm registers, which the caller's code may not touch
 * again for a long time (glibc's AVX-512 memcpy uses zmm16-31, which
 * little else does), and registers are saved verbatim into core dumps and
 * signal frames.  All vector registers are caller-saved in the x86-64
 * System V ABI, so clearing them here costs the caller nothing but the
 * instructions (a few nanoseconds).  Elsewhere a no-op.
 */
#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx512f"))) static void zero_zmm(void)
{
	__asm__ volatile("vzeroall\n\t"
	                 "vpxord %%zmm16, %%zmm16, %%zmm16\n\t"
	                 "vpxord %%zmm17, %%zmm17, %%zmm17\n\t"
	                 "vpxord %%zmm18, %%zmm18, %%zmm18\n\t"
	                 "vpxord %%zmm19, %%zmm19, %%zmm19\n\t"
	                 "vpxord %%zmm20, %%zmm20, %%zmm20\n\t"
	                 "vpxord %%zmm21, %%zmm21, %%zmm21\n\t"
	                 "vpxord %%zmm22, %%zmm22, %%zmm22\n\t"
	                 "vpxord %%zmm23, %%zmm23, %%zmm23\n\t"
	                 "vpxord %%zmm24, %%zmm24, %%zmm24\n\t"
	                 "vpxord %%zmm25, %%zmm25, %%zmm25\n\t"
	                 "vpxord %%zmm26, %%zmm26, %%zmm26\n\t"
	                 "vpxord %%zmm27, %%zmm27, %%zmm27\n\t"
	                 "vpxord %%zmm28, %%zmm28, %%zmm28\n\t"
	                 "vpxord %%zmm29, %%zmm29, %%zmm29\n\t"
	                 "vpxord %%zmm30, %%zmm30, %%zmm30\n\t"
	                 "vpxord %%zmm31, %%zmm31, %%zmm31"
	                 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
	                 "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
	                 "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17",
	                 "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23",
	                 "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29",
	                 "xmm30", "xmm31");
}

__attribute__((target("avx"))) static void zero_ymm(void)
{
	__asm__ volatile("vzeroall" ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
	                 "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
	                 "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

static void zero_xmm(void)
{
	__asm__ volatile("pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\t"
	                 "pxor %%xmm2, %%xmm2\n\tpxor %%xmm3, %%xmm3\n\t"
	                 "pxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
	                 "pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\t"
	                 "pxor %%xmm8, %%xmm8\n\tpxor %%xmm9, %%xmm9\n\t"
	                 "pxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
	                 "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\t"
	                 "pxor %%xmm14, %%xmm14\n\tpxor %%xmm15, %%xmm15"
	                 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
	                 "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
	                 "xmm12", "xmm13", "xmm14", "xmm15");
}

static void (*zero_vec)(void);
static pthread_once_t vec_once = PTHREAD_ONCE_INIT;

static void pick_zero_vec(void)
{
	__builtin_cpu_init();
	zero_vec = __builtin_cpu_supports("avx512f") ? zero_zmm
	         : __builtin_cpu_supports("avx") ? zero_ymm : zero_xmm;
}

void wks__wipe_registers(void)
{
	pthread_once(&vec_once, pick_zero_vec);
	zero_vec();
}
#else
void wks__wipe_registers(void)
{
}
#endif
