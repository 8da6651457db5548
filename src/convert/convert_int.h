/* src/convert/: what its files share (the public face is
 * include/wks/convert.h). */
#ifndef WKS_CONVERT_INT_H
#define WKS_CONVERT_INT_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/types.h>

#include "convert/jks.h"
#include "wks/convert.h"

struct wks_convert_report {
	size_t done;
	size_t n, cap;
	struct {
		char *alias;
		int reason;
		char *detail;
	} *v;
};

/* A new empty report (NULL when out of memory). */
wks_convert_report *wks__report_new(void);
/* Record that `alias` was skipped for `reason` (a wks_err) with the
 * message `detail`.  Returns 0 or WKS_ERR_NOMEM. */
int wks__report_skip(wks_convert_report *r, const char *alias, int reason,
		     const char *detail);

/* The limits of the Java and PKCS#12 readers from the process-wide
 * properties (lim->kdf NULL: the caller makes the meter). */
void wks__convert_limits(jks_limits *lim);

/* Ask `cb` for password number `attempt` of `alias` into buf (size
 * WKS__CB_PW_MAX): 1 with *len set, 0 when it gave up or is NULL. */
#define WKS__CB_PW_MAX 1024
#define WKS__CB_MAX_TRIES 16
int wks__ask_pw(wks_password_cb cb, void *arg, const char *alias,
		unsigned attempt, char *buf, size_t *len);

/* The JCA name of a secret key algorithm OID as PKCS#12 readers report
 * it: the first name p12.c's table has for it, else the dotted OID (as
 * Java reports an OID it does not know).  Heap; NULL if out of memory. */
char *wks__p12_alg_name(const ASN1_OBJECT *obj);

/* Decrypt `in` under the PBE `alg` (iteration count `iter`, as
 * wks_pbe_iterations() reads it, already checked against the cap) with
 * pw/pw_len (pw NULL: PKCS#12's absent password), every key derivation
 * through the meter m (p12pbe.c).  *out (OPENSSL_malloc()ed; wipe it with
 * OPENSSL_clear_free(*out, *out_len)).  0, WKS_ERR_LIMIT (the budget, with
 * the detail), WKS_ERR_NOMEM, or another error for data that does not
 * decrypt (no detail: the caller says so in one message). */
int wks__p12_decrypt(uint8_t **out, size_t *out_len, wks__kdf_meter *m,
		     const X509_ALGOR *alg, long iter, const char *pw,
		     int pw_len, const ASN1_OCTET_STRING *in);

/* store/keypool.c: about n new key entries are about to be set in st
 * (their keys are then derived a batch pass at a time); 0 ends the run. */
void wks__store_expect_keys(wks_store *st, size_t n);

/* The PKCS#12 branch of wks_convert_read() (p12read.c). */
int wks__p12_read(wks_store *dst, const uint8_t *data, size_t len,
		  const char *pw, size_t pw_len, unsigned flags,
		  wks_convert_report *rep);

#endif
