/*
 * Slots and tokens: one slot per [token] of the configuration, its token
 * always present.  A token whose store file does not exist yet is not
 * initialised (C_InitToken creates the store); one whose store this
 * process cannot save (permissions, owner) is write-protected.
 */
#define _GNU_SOURCE /* AT_EACCESS */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "p11.h"

/* Does the store exist for all this process can tell (stat() fails for
 * another reason than its absence)? */
static int store_hidden(const char *path)
{
	struct stat sb;

	return stat(path, &sb) != 0 && errno != ENOENT && errno != ENOTDIR;
}

/* A save keeps the store file's owner and group (libwks refuses to hand
 * the file to another user): can this process?  1 if not, with *e set. */
static int foreign_owner(const char *path, int *e)
{
	gid_t groups[256];
	struct stat sb;
	int n;

	if (geteuid() == 0 || stat(path, &sb) != 0)
		return 0;
	if (sb.st_uid != geteuid()) {
		*e = EPERM;
		return 1;
	}
	if (sb.st_gid == getegid())
		return 0;
	n = getgroups((int)(sizeof(groups) / sizeof(groups[0])), groups);
	for (int i = 0; i < n; i++)
		if (groups[i] == sb.st_gid)
			return 0;
	*e = EPERM;
	return 1;
}

CK_RV w11_token_writable(const w11_token *t)
{
	const char *path = t->conf->store;
	char *d;
	int e = 0;

	if (t->conf->read_only)
		return CKR_TOKEN_WRITE_PROTECTED;
	/* A save writes a new file in the store's folder and renames it
	 * over the store, with the old file's owner and group: the folder
	 * must be writable, and the file too (a read-only store file says
	 * not to change it), and its owner this process's. */
	if (faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0 &&
	    errno != ENOENT) {
		e = errno;
		W11_LOG("token \"%s\": write-protected: %s: %s",
			t->conf->label, path, strerror(e));
	} else if (foreign_owner(path, &e)) {
		W11_LOG("token \"%s\": write-protected: %s belongs to another "
			"user or group (a save keeps them)", t->conf->label,
			path);
	} else {
		if (!(d = strdup(path)))
			return CKR_HOST_MEMORY;
		if (faccessat(AT_FDCWD, dirname(d), W_OK | X_OK,
			      AT_EACCESS) != 0) {
			e = errno;
			W11_LOG("token \"%s\": write-protected: the folder "
				"of %s: %s", t->conf->label, path,
				strerror(e));
		}
		free(d);
	}
	return e ? CKR_TOKEN_WRITE_PROTECTED : CKR_OK;
}

CK_RV C_GetSlotList(CK_BBOOL present, CK_SLOT_ID_PTR list, CK_ULONG_PTR n)
{
	CK_RV rv;

	(void)present; /* every slot holds its token */
	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if (!n) {
		rv = CKR_ARGUMENTS_BAD;
	} else if (!list) {
		*n = w11_g.ntokens;
	} else if (*n < w11_g.ntokens) {
		*n = w11_g.ntokens;
		rv = CKR_BUFFER_TOO_SMALL;
	} else {
		for (size_t i = 0; i < w11_g.ntokens; i++)
			list[i] = i;
		*n = w11_g.ntokens;
	}
	w11_leave();
	return rv;
}

CK_RV C_GetSlotInfo(CK_SLOT_ID slot, CK_SLOT_INFO_PTR info)
{
	w11_token *t;
	char desc[80];
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if (!info) {
		rv = CKR_ARGUMENTS_BAD;
	} else if (!(t = w11_slot_token(slot))) {
		rv = CKR_SLOT_ID_INVALID;
	} else {
		memset(info, 0, sizeof(*info));
		snprintf(desc, sizeof(desc), "WKS keystore %s",
			 t->conf->label);
		w11_pad(info->slotDescription, sizeof(info->slotDescription),
			desc);
		w11_pad(info->manufacturerID, sizeof(info->manufacturerID),
			"libwks");
		info->flags = CKF_TOKEN_PRESENT;
		info->hardwareVersion.major = WKS_VERSION_MAJOR;
		info->hardwareVersion.minor = WKS_VERSION_MINOR;
		info->firmwareVersion = info->hardwareVersion;
	}
	w11_leave();
	return rv;
}

CK_RV C_GetTokenInfo(CK_SLOT_ID slot, CK_TOKEN_INFO_PTR info)
{
	w11_token *t;
	w11_fileid fid;
	CK_RV rv;

	if ((rv = w11_enter()) != CKR_OK)
		return rv;
	if (!info) {
		rv = CKR_ARGUMENTS_BAD;
		goto done;
	}
	if (!(t = w11_slot_token(slot))) {
		rv = CKR_SLOT_ID_INVALID;
		goto done;
	}
	w11_fileid_of(&fid, t->conf->store);
	/* a store this process cannot even look at (a folder it may not
	 * search) is not one to initialise */
	if (!fid.exists && store_hidden(t->conf->store))
		fid.exists = 1;
	memset(info, 0, sizeof(*info));
	w11_pad(info->label, sizeof(info->label), t->conf->label);
	w11_pad(info->manufacturerID, sizeof(info->manufacturerID), "libwks");
	w11_pad(info->model, sizeof(info->model), "WKS keystore");
	w11_pad(info->serialNumber, sizeof(info->serialNumber), t->serial);
	/* Certificates and public keys need no login; keys do. */
	info->flags = CKF_RNG | CKF_LOGIN_REQUIRED;
	if (fid.exists)
		info->flags |= CKF_TOKEN_INITIALIZED | CKF_USER_PIN_INITIALIZED;
	if (w11_token_writable(t) != CKR_OK)
		info->flags |= CKF_WRITE_PROTECTED;
	info->ulMaxSessionCount = CK_EFFECTIVELY_INFINITE;
	info->ulMaxRwSessionCount = CK_EFFECTIVELY_INFINITE;
	pthread_mutex_lock(&t->lock);
	info->ulSessionCount = t->nsessions;
	info->ulRwSessionCount = t->nrw;
	pthread_mutex_unlock(&t->lock);
	info->ulMaxPinLen = 1024;
	info->ulMinPinLen = 1;
	info->ulTotalPublicMemory = CK_UNAVAILABLE_INFORMATION;
	info->ulFreePublicMemory = CK_UNAVAILABLE_INFORMATION;
	info->ulTotalPrivateMemory = CK_UNAVAILABLE_INFORMATION;
	info->ulFreePrivateMemory = CK_UNAVAILABLE_INFORMATION;
	info->hardwareVersion.major = WKS_VERSION_MAJOR;
	info->hardwareVersion.minor = WKS_VERSION_MINOR;
	info->firmwareVersion = info->hardwareVersion;
	memset(info->utcTime, ' ', sizeof(info->utcTime));
done:
	w11_leave();
	return rv;
}
