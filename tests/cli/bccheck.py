#!/usr/bin/env python3
"""Check a WKS store converted from a Bouncy Castle keystore against what
keytool says of the source (tests/cli/bcstores.sh).

usage: bccheck.py WKS STORE.wks PASSWORD LISTING [P12 P12PASS]

LISTING is `keytool -list -v` of the source; the store must hold exactly
its aliases, each with keytool's entry type, certificate chain (SHA-256
fingerprints, in order) and creation date, as `wks list -v` shows them.
P12 is keytool's -importkeystore of the source into PKCS12 (password
P12PASS): each private and secret key the store gives (`wks export-key
--der`) must be byte for byte the one inside it.  The PKCS12 is read here
(its unencrypted SafeContents, where Java puts the shrouded key bags and
the secret bags; each bag decrypted with PBKDF2 + AES-CBC of the
`cryptography` package), not with `openssl pkcs12`, which prints keys
re-encoded by OpenSSL (an EC key gains its public key).

Prints "ok" per check passed, "FAIL: ..." per failure.
"""
import datetime
import hashlib
import re
import subprocess
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC


def run(*a):
    p = subprocess.run(a, capture_output=True, start_new_session=True)
    return p.returncode, p.stdout


def fail(m):
    print("FAIL: %s: %s" % (STORE, m))


# ---- DER, just enough ------------------------------------------------------

def tlv(d, i):
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
        out.append((t, v))
        i = j
    return out


OID_DATA = bytes.fromhex("2a864886f70d010701")
OID_SHROUDED = bytes.fromhex("2a864886f70d010c0a0102")
OID_SECRET = bytes.fromhex("2a864886f70d010c0a0105")
OID_FRIENDLY = bytes.fromhex("2a864886f70d010914")
OID_PBKDF2 = bytes.fromhex("2a864886f70d01050c")
PRF = {bytes.fromhex("2a864886f70d0209"): hashes.SHA256(),
       bytes.fromhex("2a864886f70d020b"): hashes.SHA512(),
       bytes.fromhex("2a864886f70d0207"): hashes.SHA1()}


def pbes2_decrypt(epki, pw):
    """An EncryptedPrivateKeyInfo under PBES2 (PBKDF2, AES-CBC)."""
    alg, ct = items(items(epki)[0][1])
    _, params = items(alg[1])
    kdf, enc = items(params[1])
    kp = items(items(kdf[1])[1][1])
    salt, it = kp[0][1], int.from_bytes(kp[1][1], "big")
    prf = hashes.SHA1()
    for t, v in kp[2:]:
        if t == 0x30:
            prf = PRF[items(v)[0][1]]
    eoid, iv = items(enc[1])
    klen = {0x02: 16, 0x16: 24, 0x2a: 32}[eoid[1][-1]]
    key = PBKDF2HMAC(prf, klen, salt, it).derive(pw.encode())
    d = Cipher(algorithms.AES(key), modes.CBC(iv[1])).decryptor()
    out = d.update(ct[1]) + d.finalize()
    return out[:-out[-1]]


def p12_keys(path, pw):
    """friendlyName -> the bytes keytool exported: PKCS#8 of a private
    key, the raw key of a secret bag."""
    keys = {}
    pfx = items(items(open(path, "rb").read())[0][1])
    auth = items(items(pfx[1][1])[1][1])[0][1]
    for ci in items(items(auth)[0][1]):
        oid, content = items(ci[1])
        if oid[1] != OID_DATA:
            continue  # the encrypted certificate safe
        for bag in items(items(items(content[1])[0][1])[0][1]):
            f = items(bag[1])
            btype, val = f[0][1], items(f[1][1])[0][1]
            name = None
            for attr in items(f[2][1]) if len(f) > 2 else []:
                a = items(attr[1])
                if a[0][1] == OID_FRIENDLY:
                    name = items(a[1][1])[0][1].decode("utf-16-be")
            if btype == OID_SHROUDED:
                keys[name] = pbes2_decrypt(bag_tlv(val), pw)
            elif btype == OID_SECRET:
                sv = items(val)
                p8 = pbes2_decrypt(items(sv[1][1])[0][1], pw)
                keys[name] = items(items(p8)[0][1])[2][1]
    return keys


def bag_tlv(v):
    """Re-wrap a SEQUENCE's contents (items() gives contents)."""
    n = len(v)
    if n < 0x80:
        return bytes([0x30, n]) + v
    b = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x30, 0x80 | len(b)]) + b + v


# ---- keytool -list -v and wks list -v ---------------------------------------

TYPES = {"PrivateKeyEntry": "private-key", "trustedCertEntry": "certificate",
         "SecretKeyEntry": "secret-key"}


def keytool_listing(path):
    want = {}
    text = open(path, encoding="utf-8").read()
    for block in re.split(r"\n(?=Alias name: )", text):
        m = re.match(r"Alias name: (.*)\n", block)
        if not m:
            continue
        date = re.search(r"Creation date: (.*)", block).group(1).strip()
        t = TYPES[re.search(r"Entry type: (\w+)", block).group(1)]
        fps = re.findall(r"SHA256: ([0-9A-F:]+)", block)
        want[m.group(1)] = (t, fps, date)
    return want


def wks_listing(wks, store, pw):
    rc, out = run(wks, "list", "-v", "-k", store, "--storepass", "pass:" + pw)
    if rc:
        fail("wks list -v: exit %d" % rc)
        return {}
    got = {}
    for block in re.split(r"\n(?=Alias: )", out.decode("utf-8")):
        m = re.match(r"Alias: +(.*)\n", block)
        if not m:
            continue
        t = re.search(r"Type: +(\S+)", block).group(1)
        created = re.search(r"Created: +(\S+)", block).group(1)
        fps = re.findall(r"SHA-256: ([0-9A-F:]+)", block)
        alg = re.search(r"Algorithm: +(\S+)", block)
        got[m.group(1)] = (t, fps, created, alg.group(1) if alg else None)
    return got


def keytool_date(iso):
    """2026-12-02 as keytool prints it (en_US): Dec 2, 2026."""
    d = datetime.date.fromisoformat(iso)
    return "%s %d, %d" % (d.strftime("%b"), d.day, d.year)


def main():
    global STORE
    wks, STORE, pw, listing = sys.argv[1:5]
    want = keytool_listing(listing)
    got = wks_listing(wks, STORE, pw)
    if sorted(got) != sorted(want):
        fail("aliases %r, keytool has %r" % (sorted(got), sorted(want)))
    else:
        print("ok")
    for a in sorted(set(got) & set(want)):
        t, fps, date = want[a]
        gt, gfps, created, _ = got[a]
        if gt != t:
            fail("%s: type %s, keytool %s" % (a, gt, t))
        elif gfps != fps:
            fail("%s: chain %r, keytool %r" % (a, gfps, fps))
        elif keytool_date(created) != date:
            fail("%s: created %s, keytool %s" % (a, created, date))
        else:
            print("ok")
    if len(sys.argv) < 7:
        return
    exported = p12_keys(sys.argv[5], sys.argv[6])
    for a, (t, _, _) in sorted(want.items()):
        if t == "certificate":
            continue
        rc, der = run(wks, "export-key", "-k", STORE, "-a", a,
                      "--storepass", "pass:" + pw, "--der")
        if rc:
            fail("%s: export-key exit %d" % (a, rc))
        elif a not in exported:
            # (keytool could not export it: BCFKS HMAC keys, see
            # tests/data/bc/stores.sh): its length and algorithm only.
            print("ok" if len(der) == 32 and got[a][3] == "HmacSHA256" else
                  "FAIL: %s: %s: %d bytes, %r" % (STORE, a, len(der),
                                                  got[a][3]))
        elif der != exported[a]:
            fail("%s: key bytes differ from keytool's export (sha256 %s, "
                 "keytool %s)" % (a, hashlib.sha256(der).hexdigest()[:16],
                                  hashlib.sha256(exported[a]).hexdigest()[:16]))
        else:
            print("ok")


STORE = ""
main()
