#!/usr/bin/env python3
"""Rewrite a BKS or BCFKS keystore at another iteration count.

usage: bcreseal.py [--password NEW] [--plain FILE] IN OUT STOREPASS
                   ITERATIONS [ALIAS=KEYPASS ...]

Every key derivation of the store (its MAC, and for BCFKS its encryption)
and of each key whose password is given (ALIAS=KEYPASS; a key without one
keeps its protection) is redone at ITERATIONS, with the same salts and
nonces; everything else is kept byte for byte.  Keys are decrypted and
encrypted again, so the result opens with the same passwords, or all with
NEW (--password).  --plain: also write a BCFKS result's store data (the
DER inside its encryption).  For the
test fixtures and fuzz seeds that should not cost Bouncy Castle's 51200
PBKDF2 iterations per key (tests/data/bc/README, fuzz/corpus/bks,
fuzz/corpus/bcfks).

An implementation of its own (Python's hashlib and the `cryptography`
package), from the format notes of src/convert/bc.h: that libwks reads
what it writes is a second check of both.  BKS: PKCS#12 key derivation
(SHA-1), HMAC-SHA1, PBEWithSHAAnd3-KeyTripleDES-CBC.  BCFKS with PBKDF2
(HMAC-SHA-512) and AES-256-CCM or key wrap; stores under scrypt are not
rewritten.
"""
import hashlib
import hmac
import struct
import sys

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESCCM
from cryptography.hazmat.primitives.keywrap import (
    aes_key_unwrap_with_padding, aes_key_wrap_with_padding)
from cryptography.hazmat.primitives import padding

try:  # cryptography >= 43 moved it
    from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
except ImportError:
    TripleDES = algorithms.TripleDES


def pw_bytes(s):
    """PKCS12PasswordToBytes: UTF-16BE (surrogate pairs) and 00 00."""
    return s.encode("utf-16-be") + b"\0\0" if s else b""


# ---- BKS -------------------------------------------------------------------

def p12_kdf(pw, salt, ident, iters, n):
    """RFC 7292 appendix B.2 with SHA-1 (u 20, v 64)."""
    v = 64

    def fill(b):
        if not b:
            return b""
        k = v * ((len(b) + v - 1) // v)
        return (b * (k // len(b) + 1))[:k]
    i = fill(salt) + fill(pw)
    out = b""
    while len(out) < n:
        a = hashlib.sha1(bytes([ident]) * v + i).digest()
        for _ in range(iters - 1):
            a = hashlib.sha1(a).digest()
        out += a
        b = int.from_bytes((a * 4)[:v], "big")
        i = b"".join(((int.from_bytes(i[j:j + v], "big") + b + 1)
                      % (1 << (8 * v))).to_bytes(v, "big")
                     for j in range(0, len(i), v))
    return out[:n]


def des3(key, iv, data, enc):
    c = Cipher(TripleDES(key), modes.CBC(iv))
    if enc:
        p = padding.PKCS7(64).padder()
        data = p.update(data) + p.finalize()
        e = c.encryptor()
        return e.update(data) + e.finalize()
    d = c.decryptor()
    out = d.update(data) + d.finalize()
    u = padding.PKCS7(64).unpadder()
    return u.update(out) + u.finalize()


class Rd:
    def __init__(self, d, i=0):
        self.d, self.i = d, i

    def take(self, n):
        if n < 0 or self.i + n > len(self.d):
            raise ValueError("truncated")
        b = self.d[self.i:self.i + n]
        self.i += n
        return b

    def int(self, fmt):
        return struct.unpack(">" + fmt, self.take(struct.calcsize(fmt)))[0]

    def utf(self):
        return self.take(self.int("H"))


def bks(data, sp, iters, keypw, new):
    r = Rd(data)
    version, sl = r.int("I"), r.int("i")
    salt = r.take(sl)
    old_iter = r.int("i")
    body, mac = data[r.i:-20], data[-20:]
    mlen = 20 if version == 2 else 2
    key = p12_kdf(pw_bytes(sp), salt, 3, old_iter, mlen)
    if hmac.new(key, body, "sha1").digest() != mac:
        raise SystemExit("bcreseal: BKS MAC: wrong store password")
    out = bytearray()
    r = Rd(body)
    while True:
        t = r.take(1)
        out += t
        if t == b"\0":
            break
        start = r.i
        alias = r.utf().decode("utf-8", "surrogateescape")
        r.take(8)
        for _ in range(r.int("i")):
            r.utf()
            r.take(r.int("i"))
        if t[0] == 1:
            r.utf()
            r.take(r.int("i"))
        elif t[0] == 2:
            r.take(1)
            r.utf()
            r.utf()
            r.take(r.int("i"))
        out += body[start:r.i]
        if t[0] not in (3, 4):
            continue
        blob = r.take(r.int("i"))
        if t[0] == 4 and alias in keypw:
            b = Rd(blob)
            ksalt = b.take(b.int("i"))
            kit = b.int("i")
            pw = pw_bytes(keypw[alias])
            plain = des3(p12_kdf(pw, ksalt, 1, kit, 24),
                         p12_kdf(pw, ksalt, 2, kit, 8), blob[b.i:], False)
            pw = pw_bytes(new or keypw[alias])
            blob = (struct.pack(">i", len(ksalt)) + ksalt +
                    struct.pack(">i", iters) +
                    des3(p12_kdf(pw, ksalt, 1, iters, 24),
                         p12_kdf(pw, ksalt, 2, iters, 8), plain, True))
        out += struct.pack(">i", len(blob)) + blob
    head = struct.pack(">Ii", version, sl) + salt + struct.pack(">i", iters)
    key = p12_kdf(pw_bytes(new or sp), salt, 3, iters, mlen)
    return head + bytes(out) + hmac.new(key, bytes(out), "sha1").digest()


# ---- BCFKS -----------------------------------------------------------------

def tlv(d, i=0):
    t, n = d[i], d[i + 1]
    i += 2
    if n & 0x80:
        k = n & 0x7F
        n = int.from_bytes(d[i:i + k], "big")
        i += k
    return t, d[i:i + n], i + n


def items(d):
    out, i = [], 0
    while i < len(d):
        t, v, j = tlv(d, i)
        out.append((t, v, d[i:j]))
        i = j
    return out


def enc(tag, content):
    n = len(content)
    if n < 0x80:
        return bytes([tag, n]) + content
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(b)]) + b + content


def der_int(v):
    return enc(0x02, v.to_bytes(v.bit_length() // 8 + 1, "big"))


OID_CCM = bytes.fromhex("60864801650304012f")
OID_SHA512 = bytes.fromhex("2a864886f70d020b")


def pbes2(alg):
    """(salt, iterations, key length, prf AlgorithmIdentifier, enc OID,
    enc params TLV or b"") of a PBES2 AlgorithmIdentifier (contents)."""
    _, params = items(alg)[:2]
    kdf, encs = items(params[1])
    kp = items(items(kdf[1])[1][1])
    salt, it = kp[0][1], int.from_bytes(kp[1][1], "big")
    klen = int.from_bytes(kp[2][1], "big") if kp[2][0] == 0x02 else None
    prf = kp[-1][2]
    e = items(encs[1])
    return salt, it, klen, prf, e[0][1], e[1][2] if len(e) > 1 else b""


def pbkdf2_key(pw, purpose, salt, iters, n, prf):
    if items(items(prf)[0][1])[0][1] != OID_SHA512:
        raise SystemExit("bcreseal: only PBKDF2 with HMAC-SHA-512")
    return hashlib.pbkdf2_hmac("sha512", pw_bytes(pw) + pw_bytes(purpose),
                               salt, iters, n)


def pbes2_alg(salt, iters, klen, prf, eoid, epar):
    kdf = enc(0x30, enc(0x06, bytes.fromhex("2a864886f70d01050c")) +
              enc(0x30, enc(0x04, salt) + der_int(iters) +
                  (der_int(klen) if klen is not None else b"") + prf))
    return enc(0x30, enc(0x06, bytes.fromhex("2a864886f70d01050d")) +
               enc(0x30, kdf + enc(0x30, enc(0x06, eoid) + epar)))


def crypt(alg, data, pw, purpose, iters, decrypt_only=False, new=None):
    """Decrypt data under the PBES2 AlgorithmIdentifier TLV `alg`; return
    the plaintext, and (unless decrypt_only) a new AlgorithmIdentifier and
    ciphertext at `iters` (under `new` if given)."""
    salt, it, klen, prf, eoid, epar = pbes2(items(alg)[0][1])

    def run(iterations, blob, encrypt):
        key = pbkdf2_key(new or pw if encrypt else pw, purpose, salt,
                         iterations, klen or 32, prf)
        if eoid == OID_CCM:
            p = items(items(epar)[0][1])
            icv = int.from_bytes(p[1][1], "big") if len(p) > 1 else 12
            c = AESCCM(key, tag_length=icv)
            return (c.encrypt if encrypt else c.decrypt)(p[0][1], blob, None)
        return (aes_key_wrap_with_padding if encrypt else
                aes_key_unwrap_with_padding)(key, blob)
    plain = run(it, data, False)
    if decrypt_only:
        return plain
    return plain, pbes2_alg(salt, iters, klen, prf, eoid, epar), \
        run(iters, plain, True)


def bcfks(data, sp, iters, keypw, new, plain_out):
    store, check = items(items(data)[0][1])
    macalg, kdf, mac = items(check[1])
    if items(kdf[1])[0][1] != bytes.fromhex("2a864886f70d01050c"):
        raise SystemExit("bcreseal: only stores under PBKDF2")
    kp = items(items(kdf[1])[1][1])
    salt, klen, prf = kp[0][1], int.from_bytes(kp[2][1], "big"), kp[3][2]
    key = pbkdf2_key(sp, "INTEGRITY_CHECK", salt,
                     int.from_bytes(kp[1][1], "big"), klen, prf)
    md = "sha3_512" if items(macalg[1])[0][1][-1] == 0x10 else "sha512"
    if hmac.new(key, store[2], md).digest() != mac[1]:
        raise SystemExit("bcreseal: BCFKS MAC: wrong store password")
    alg, ct = items(store[1])
    plain = crypt(alg[2], ct[1], sp, "STORE_ENCRYPTION", iters, True)
    f = items(items(plain)[0][1])
    objs = []
    for o in items(f[4][1]):
        fs = items(o[1])
        t, alias = fs[0][1][0], fs[1][1].decode()
        if alias in keypw and t in (1, 2):
            purpose = "PRIVATE_KEY_ENCRYPTION" if t == 1 else \
                "SECRET_KEY_ENCRYPTION"
            d = items(fs[4][1])[0][1]
            if t == 1:  # EncryptedPrivateKeyData: EPKI, chain
                epki, chain = items(d)
                a, c = items(epki[1])
                _, na, nc = crypt(a[2], c[1], keypw[alias], purpose, iters,
                                  new=new)
                blob = enc(0x30, enc(0x30, na + enc(0x04, nc)) + chain[2])
            else:
                a, c = items(d)
                _, na, nc = crypt(a[2], c[1], keypw[alias], purpose, iters,
                                  new=new)
                blob = enc(0x30, na + enc(0x04, nc))
            fs[4] = (0x04, blob, enc(0x04, blob))
        objs.append(enc(0x30, b"".join(x[2] for x in fs)))
    f[4] = (0x30, None, enc(0x30, b"".join(objs)))
    plain = enc(0x30, b"".join(x[2] for x in f))
    if plain_out:
        open(plain_out, "wb").write(plain)
    sp = new or sp
    salt2, _, klen2, prf2, eoid, epar = pbes2(alg[1])
    na = pbes2_alg(salt2, iters, klen2, prf2, eoid, epar)
    key2 = pbkdf2_key(sp, "STORE_ENCRYPTION", salt2, iters, klen2 or 32,
                      prf2)
    if eoid == OID_CCM:
        p = items(items(epar)[0][1])
        icv = int.from_bytes(p[1][1], "big") if len(p) > 1 else 12
        nc = AESCCM(key2, tag_length=icv).encrypt(p[0][1], plain, None)
    else:
        nc = aes_key_wrap_with_padding(key2, plain)
    store_tlv = enc(0x30, na + enc(0x04, nc))
    kdf_tlv = enc(0x30, enc(0x06, bytes.fromhex("2a864886f70d01050c")) +
                  enc(0x30, enc(0x04, salt) + der_int(iters) +
                      der_int(klen) + prf))
    key = pbkdf2_key(sp, "INTEGRITY_CHECK", salt, iters, klen, prf)
    newmac = hmac.new(key, store_tlv, md).digest()
    return enc(0x30, store_tlv + enc(0x30, macalg[2] + kdf_tlv +
                                     enc(0x04, newmac)))


def main():
    a = sys.argv[1:]
    new = plain_out = None
    while a and a[0].startswith("--"):
        if a[0] == "--password":
            new = a[1]
        elif a[0] == "--plain":
            plain_out = a[1]
        else:
            raise SystemExit(__doc__)
        a = a[2:]
    if len(a) < 4:
        raise SystemExit(__doc__)
    src, dst, sp, iters = a[:4]
    keypw = dict(x.split("=", 1) for x in a[4:])
    data = open(src, "rb").read()
    if data[0] == 0x30:
        out = bcfks(data, sp, int(iters), keypw, new, plain_out)
    else:
        out = bks(data, sp, int(iters), keypw, new)
    open(dst, "wb").write(out)


main()
