/*
 * Slots and tokens: one slot per [token] of the configuration, its token
 * always present.  A token whose store file does not exist yet is not
 * initialised (C_InitToken creates the store).
 */
#include <stdio.h>
#include <string.h>

#include "p11.h"

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
	memset(info, 0, sizeof(*info));
	w11_pad(info->label, sizeof(info->label), t->conf->label);
	w11_pad(info->manufacturerID, sizeof(info->manufacturerID), "libwks");
	w11_pad(info->model, sizeof(info->model), "WKS keystore");
	w11_pad(info->serialNumber, sizeof(info->serialNumber), t->serial);
	/* Certificates and public keys need no login; keys do. */
	info->flags = CKF_RNG | CKF_LOGIN_REQUIRED;
	if (fid.exists)
		info->flags |= CKF_TOKEN_INITIALIZED | CKF_USER_PIN_INITIALIZED;
	if (t->conf->read_only)
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
