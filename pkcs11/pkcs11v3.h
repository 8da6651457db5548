/*
 * The few PKCS#11 3.0 definitions the module uses that an older p11-kit
 * header lacks.
 *
 * The module takes its PKCS#11 header from p11-kit (<p11-kit/pkcs11.h>).
 * Debian 12's p11-kit 0.24 ships the 2.40 header; 3.0 added interfaces
 * (C_GetInterfaceList, C_GetInterface and a longer function list) and a
 * few attributes.  Everything here is defined only when the p11-kit
 * header did not define it (p11-kit 0.25 and later carry all of it, with
 * the same names, values and layout, taken from the OASIS text).
 */
#ifndef WKS_PKCS11V3_H
#define WKS_PKCS11V3_H

#include <p11-kit/pkcs11.h>

#ifndef CKA_UNIQUE_ID
#define CKA_UNIQUE_ID (0x4UL)
#endif
#ifndef CKR_OPERATION_CANCEL_FAILED
#define CKR_OPERATION_CANCEL_FAILED (0x202UL)
#endif

#ifndef CKF_INTERFACE_FORK_SAFE
#define CKF_INTERFACE_FORK_SAFE (0x1UL)

typedef struct CK_INTERFACE {
	CK_CHAR *pInterfaceName;
	CK_VOID_PTR pFunctionList;
	CK_FLAGS flags;
} CK_INTERFACE;
typedef CK_INTERFACE *CK_INTERFACE_PTR;
typedef CK_INTERFACE_PTR *CK_INTERFACE_PTR_PTR;
#define WKS_P11_OWN_INTERFACE 1
#endif

/* HKDF (3.0) */
#ifndef CKM_HKDF_DERIVE
#define CKK_HKDF (0x42UL)
#define CKM_HKDF_DERIVE (0x402aUL)
#define CKM_HKDF_DATA (0x402bUL)
#define CKM_HKDF_KEY_GEN (0x402cUL)
#define CKF_HKDF_SALT_NULL (0x1UL)
#define CKF_HKDF_SALT_DATA (0x2UL)
#define CKF_HKDF_SALT_KEY (0x4UL)
typedef struct CK_HKDF_PARAMS {
	CK_BBOOL bExtract;
	CK_BBOOL bExpand;
	CK_MECHANISM_TYPE prfHashMechanism;
	CK_ULONG ulSaltType;
	CK_BYTE_PTR pSalt;
	CK_ULONG ulSaltLen;
	CK_OBJECT_HANDLE hSaltKey;
	CK_BYTE_PTR pInfo;
	CK_ULONG ulInfoLen;
} CK_HKDF_PARAMS;
#endif

/* CK_EDDSA_PARAMS (3.0): Ed25519ph / Ed448 contexts, which the module
 * refuses; only their shape is needed to read them. */
typedef struct {
	CK_BBOOL phFlag;
	CK_ULONG ulContextDataLen;
	CK_BYTE_PTR pContextData;
} wks_p11_eddsa_params;

/*
 * The 3.0 function list: the 2.40 list followed by 24 functions.  Its
 * first part is laid out exactly as CK_FUNCTION_LIST (a version, then
 * pointers only), so it is written here as that structure followed by the
 * new pointers.  The message-based functions are not offered by the
 * module (each returns CKR_FUNCTION_NOT_SUPPORTED).
 */
#define WKS_P11_MSG_INIT(name) \
	CK_RV (*name)(CK_SESSION_HANDLE, CK_MECHANISM_PTR, CK_OBJECT_HANDLE)
#define WKS_P11_MSG_FINAL(name) CK_RV (*name)(CK_SESSION_HANDLE)
typedef struct {
	CK_FUNCTION_LIST v2;
	CK_RV (*C_GetInterfaceList)(CK_INTERFACE_PTR, CK_ULONG_PTR);
	CK_RV (*C_GetInterface)(CK_UTF8CHAR_PTR, CK_VERSION_PTR,
				CK_INTERFACE_PTR_PTR, CK_FLAGS);
	CK_RV (*C_LoginUser)(CK_SESSION_HANDLE, CK_USER_TYPE, CK_UTF8CHAR_PTR,
			     CK_ULONG, CK_UTF8CHAR_PTR, CK_ULONG);
	CK_RV (*C_SessionCancel)(CK_SESSION_HANDLE, CK_FLAGS);
	WKS_P11_MSG_INIT(C_MessageEncryptInit);
	CK_RV (*C_EncryptMessage)(CK_SESSION_HANDLE, CK_VOID_PTR, CK_ULONG,
				  CK_BYTE_PTR, CK_ULONG, CK_BYTE_PTR, CK_ULONG,
				  CK_BYTE_PTR, CK_ULONG_PTR);
	CK_RV (*C_EncryptMessageBegin)(CK_SESSION_HANDLE, CK_VOID_PTR,
				       CK_ULONG, CK_BYTE_PTR, CK_ULONG);
	CK_RV (*C_EncryptMessageNext)(CK_SESSION_HANDLE, CK_VOID_PTR, CK_ULONG,
				      CK_BYTE_PTR, CK_ULONG, CK_BYTE_PTR,
				      CK_ULONG_PTR, CK_FLAGS);
	WKS_P11_MSG_FINAL(C_MessageEncryptFinal);
	WKS_P11_MSG_INIT(C_MessageDecryptInit);
	CK_RV (*C_DecryptMessage)(CK_SESSION_HANDLE, CK_VOID_PTR, CK_ULONG,
				  CK_BYTE_PTR, CK_ULONG, CK_BYTE_PTR, CK_ULONG,
				  CK_BYTE_PTR, CK_ULONG_PTR);
	CK_RV (*C_DecryptMessageBegin)(CK_SESSION_HANDLE, CK_VOID_PTR,
				       CK_ULONG, CK_BYTE_PTR, CK_ULONG);
	CK_RV (*C_DecryptMessageNext)(CK_SESSION_HANDLE, CK_VOID_PTR, CK_ULONG,
				      CK_BYTE_PTR, CK_ULONG, CK_BYTE_PTR,
				      CK_ULONG_PTR, CK_FLAGS);
	WKS_P11_MSG_FINAL(C_MessageDecryptFinal);
	WKS_P11_MSG_INIT(C_MessageSignInit);
	CK_RV (*C_SignMessage)(CK_SESSION_HANDLE, CK_VOID_PTR, CK_ULONG,
			       CK_BYTE_PTR, CK_ULONG, CK_BYTE_PTR,
			       CK_ULONG_PTR);
	CK_RV (*C_SignMessageBegin)(CK_SESSION_HANDLE, CK_VOID_PTR, CK_ULONG);
	CK_RV (*C_SignMessageNext)(CK_SESSION_HANDLE, CK_VOID_PTR, CK_ULONG,
				   CK_BYTE_PTR, CK_ULONG, CK_BYTE_PTR,
				   CK_ULONG_PTR);
	WKS_P11_MSG_FINAL(C_MessageSignFinal);
	WKS_P11_MSG_INIT(C_MessageVerifyInit);
	CK_RV (*C_VerifyMessage)(CK_SESSION_HANDLE, CK_VOID_PTR, CK_ULONG,
				 CK_BYTE_PTR, CK_ULONG, CK_BYTE_PTR, CK_ULONG);
	CK_RV (*C_VerifyMessageBegin)(CK_SESSION_HANDLE, CK_VOID_PTR,
				      CK_ULONG);
	CK_RV (*C_VerifyMessageNext)(CK_SESSION_HANDLE, CK_VOID_PTR, CK_ULONG,
				     CK_BYTE_PTR, CK_ULONG, CK_BYTE_PTR,
				     CK_ULONG);
	WKS_P11_MSG_FINAL(C_MessageVerifyFinal);
} wks_p11_function_list_3_0;

#endif /* WKS_PKCS11V3_H */
