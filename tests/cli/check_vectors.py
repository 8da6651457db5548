#!/usr/bin/env python3
"""Check wks(1) against every keystore in shared/vectors/.

usage: check_vectors.py WKS_BINARY SHARED_DIR

For every file of the three manifests:
  * `wks list --json` (with the store password, and without one where the
    manifest says what happens then) must exit as the manifest expects
    and, when the file loads, print exactly the manifest's entries:
    aliases (sorted, duplicates collapsed, last wins), types, creation
    times, certificate SHA-256s and secret key algorithms;
  * `wks export-key --der` of every key entry must print bytes whose
    SHA-256 is the manifest's key.plaintext_sha256 (or fail with the
    expected exit status), with the key password, with the store
    password, and after a load without password, as the manifest says;
  * the `with_config` loads run with WKS_PROPERTIES naming a file that
    sets the property.

Passwords travel through the environment (--storepass env:VAR), which
also exercises that source.  WKS_VECTORS_STRIDE=n checks every n-th file
of each folder only, from the first: by default every 2nd (test_vectors
reads every file through the library in every mode), in the full mode
(WKS_TEST_FULL=1, CI's plain stage) every file, in CI's valgrind stage
every 6th.  Prints one line per failure and a final line "N passed, M
failed"; exits 1 on any failure.
"""
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys
import tempfile

EXIT = {"ok": 0, "integrity_failure": 4, "malformed": 5, "limit_exceeded": 9}
TYPES = {"private_key": "private-key", "certificate": "certificate",
         "secret_key": "secret-key"}


def jni_utf8(s):
    """An alias as libwks spells it: UTF-8, NUL as C0 80, lone surrogates
    as their 3-byte forms."""
    out = bytearray()
    for ch in s:
        if ch == "\0":
            out += b"\xc0\x80"
        else:
            out += ch.encode("utf-8", "surrogatepass")
    return bytes(out)


def sample(items):
    """Every WKS_VECTORS_STRIDE-th item (default: every 2nd; all in the
    full mode)."""
    full = os.environ.get("WKS_TEST_FULL", "0") not in ("", "0")
    stride = os.environ.get("WKS_VECTORS_STRIDE") or ("1" if full else "2")
    return items[::max(1, int(stride))]


class Checker:
    def __init__(self, wks, shared):
        self.wks = wks
        self.shared = shared
        self.results = []  # (ok, description)
        self.tmp = tempfile.mkdtemp(prefix="wks-vectors-")

    def run(self, args, env_extra=None):
        env = dict(os.environ)
        env["WKS_PROPERTIES"] = ""
        if env_extra:
            env.update(env_extra)
        p = subprocess.run([self.wks] + args, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env, start_new_session=True, timeout=300)
        return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")

    # ---- one file -------------------------------------------------------

    def expected_entries(self, record):
        """Entries after load: last record of an alias wins; sorted."""
        by_alias = {}
        for e in record["entries"]:
            by_alias[e["alias"]] = e
        return [by_alias[a] for a in sorted(by_alias, key=jni_utf8)]

    def compare_list(self, name, out, record):
        try:
            doc = json.loads(out.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as ex:
            return "output is not JSON: %s" % ex
        if list(doc.keys()) != ["entries"]:
            return "top-level keys %r" % list(doc.keys())
        got = [dict(g) for g in doc["entries"]]
        want = self.expected_entries(record)
        if [g.get("alias") for g in got] != [w["alias"] for w in want]:
            return "aliases %r, expected %r" % (
                [g.get("alias") for g in got], [w["alias"] for w in want])
        for g, w in zip(got, want):
            t = TYPES[w["type"]]
            # The per-certificate details (issue 11 item 5) against the
            # manifest's subject and issuer; the rest of the entry must
            # stay exactly as it was.
            problem = self.compare_details(w, t, g.pop("certificates", None))
            if problem:
                return "entry %r: %s" % (w["alias"], problem)
            exp = {"alias": w["alias"], "type": t,
                   "created_ms": w["creation_time_ms"]}
            if t == "private-key":
                exp["chain_sha256"] = [c["sha256"] for c in w["chain"]]
            elif t == "certificate":
                exp["cert_sha256"] = w["certificate"]["sha256"]
            else:
                exp["algorithm"] = w["algorithm"]
            if g != exp:
                return "entry %r: got %r, expected %r" % (w["alias"], g, exp)
        return None

    @staticmethod
    def java_name(s):
        """OpenSSL's RFC 2253 text as Java's X500Principal.getName()
        spells it (the attribute types it has no keyword for as OIDs)."""
        return s.replace("emailAddress=", "1.2.840.113549.1.9.1=")

    def compare_details(self, w, t, certs):
        if t == "secret-key":
            return None if certs is None else "a secret key with certificates"
        want = w["chain"] if t == "private-key" else [w["certificate"]]
        if not isinstance(certs, list) or len(certs) != len(want):
            return "certificates %r, expected %d" % (certs, len(want))
        for i, (c, m) in enumerate(zip(certs, want)):
            for k in ("subject", "issuer"):
                if k in m and self.java_name(c.get(k, "")) != m[k]:
                    return "certificate %d: %s %r, expected %r" % (
                        i, k, c.get(k), m[k])
            for k in ("serial", "not_before", "not_after", "key_algorithm",
                      "status", "signature_algorithm", "sha1"):
                if not isinstance(c.get(k), str) or not c[k]:
                    return "certificate %d: no %s" % (i, k)
            for k in ("not_before", "not_after"):
                if len(c[k]) != 20 or not c[k].endswith("Z") or c[k][10] != "T":
                    return "certificate %d: %s %r is not ISO 8601 UTC" % (
                        i, k, c[k])
            if "key_size" not in c:
                return "certificate %d: no key_size" % i
        return None

    def check(self, ok, desc):
        self.results.append((ok, desc))
        if not ok:
            print("FAIL: " + desc, flush=True)

    def list_json(self, name, path, pw, record, expect, props=None):
        args = ["list", "--json", "-k", path]
        env = {}
        if pw is None:
            args.append("--no-storepass")
        else:
            args += ["--storepass", "env:WKS_T_PW"]
            env["WKS_T_PW"] = pw
        # The algorithm of a secret key is stored in clear: list needs no
        # key password.
        if props:
            env["WKS_PROPERTIES"] = props
        rc, out, err = self.run(args, env)
        what = "%s: list --json %s" % (
            name, "without password" if pw is None else "with password")
        if props:
            what += " (properties %s)" % os.path.basename(props)
        if rc != EXIT[expect]:
            self.check(False, "%s: exit %d, expected %d (%s); stderr: %s" %
                       (what, rc, EXIT[expect], expect, err.strip()))
            return
        if expect != "ok":
            # One clear line naming the file.
            self.check(err.startswith("wks: " + path + ": ") and
                       err.count("\n") == 1,
                       "%s: error message %r" % (what, err))
            return
        if pw is None and "integrity not checked" not in err:
            self.check(False, "%s: no note about the skipped integrity "
                       "check" % what)
            return
        problem = self.compare_list(name, out, record)
        self.check(problem is None, "%s: %s" % (what, problem))

    def export_key(self, name, path, alias, pw, kp, entry, expect):
        args = ["export-key", "--der", "-k", path, "-a", alias]
        env = {}
        if pw is None:
            args.append("--no-storepass")
        else:
            args += ["--storepass", "env:WKS_T_PW"]
            env["WKS_T_PW"] = pw
        if kp is not None:
            args += ["--keypass", "env:WKS_T_KP"]
            env["WKS_T_KP"] = kp
        rc, out, err = self.run(args, env)
        what = "%s: export-key --der %r" % (name, alias)
        if rc != EXIT[expect]:
            self.check(False, "%s: exit %d, expected %d (%s); stderr: %s" %
                       (what, rc, EXIT[expect], expect, err.strip()))
            return
        if expect != "ok":
            self.check(len(out) == 0 and "integrity check failed" in err,
                       "%s: output or message wrong: %r" % (what, err))
            return
        got = hashlib.sha256(out).hexdigest()
        want = entry["key"]["plaintext_sha256"]
        self.check(got == want, "%s: sha256 %s, expected %s" %
                   (what, got, want))

    def entry_of(self, record, alias):
        found = None
        for e in record["entries"]:
            if e["alias"] == alias:
                found = e
        return found

    # ---- the three sets ------------------------------------------------

    def plain_set(self, folder, jobs):
        d = os.path.join(self.shared, "vectors", folder)
        with open(os.path.join(d, "manifest.json"), encoding="utf-8") as f:
            m = json.load(f)
        for fname, rec in sample(sorted(m["files"].items())):
            path = os.path.join(d, fname)
            pw = rec.get("password", m["password"])
            kp = rec.get("key_password", pw)
            name = "%s/%s" % (folder, fname)
            expect = rec["load"]["status"]
            jobs.append((self.list_json, name, path, pw, rec, expect))
            if expect != "ok":
                continue
            for e in rec["entries"]:
                if e["type"] != "certificate" and \
                        self.entry_of(rec, e["alias"]) is e:
                    jobs.append((self.export_key, name, path, e["alias"], pw,
                                 kp if kp != pw else None, e,
                                 e.get("key_status", "ok")))

    def edge_set(self, jobs):
        d = os.path.join(self.shared, "vectors", "edge")
        with open(os.path.join(d, "manifest.json"), encoding="utf-8") as f:
            m = json.load(f)
        for fname, rec in sample(sorted(m["files"].items())):
            path = os.path.join(d, fname)
            pw = rec.get("password", m["default_password"])
            kps = rec.get("key_passwords", {})
            exp = rec["expected"]
            name = "edge/%s" % fname
            dec = rec.get("decoded")
            dec_np = rec.get("decoded_without_password", dec)
            jobs.append((self.list_json, name, path, pw, dec,
                         exp["load_with_password"]))
            jobs.append((self.list_json, name, path, None, dec_np,
                         exp["load_without_password"]))
            for alias, outcome in exp.get("get_key", {}).items():
                jobs.append((self.export_key, name, path, alias, pw,
                             kps.get(alias, pw), self.entry_of(dec, alias),
                             outcome))
            for alias, outcome in exp.get(
                    "get_key_after_load_without_password", {}).items():
                jobs.append((self.export_key, name, path, alias, None,
                             kps.get(alias, pw), self.entry_of(dec_np, alias),
                             outcome))
            for alias, outcome in exp.get(
                    "get_key_with_store_password", {}).items():
                jobs.append((self.export_key, name, path, alias, pw, None,
                             self.entry_of(dec, alias), outcome))
            for i, cfg in enumerate(exp.get("with_config", [])):
                props = os.path.join(self.tmp, "%s.%d.properties" %
                                     (fname, i))
                with open(props, "w", encoding="utf-8") as f:
                    for k, v in cfg.items():
                        if k != "load":
                            f.write("%s=%s\n" % (k, v))
                jobs.append((self.list_json, name, path, pw, dec,
                             cfg["load"], props))

    def main(self):
        jobs = []
        self.plain_set("wolfjce", jobs)
        self.plain_set("wolfjce-live", jobs)
        self.edge_set(jobs)
        workers = max(2, (os.cpu_count() or 2))
        with concurrent.futures.ThreadPoolExecutor(workers) as ex:
            futures = [ex.submit(j[0], *j[1:]) for j in jobs]
            for fu in futures:
                try:
                    fu.result()
                except Exception as exc:  # a crash of the checker itself
                    self.check(False, "checker error: %r" % exc)
        for f in os.listdir(self.tmp):
            os.unlink(os.path.join(self.tmp, f))
        os.rmdir(self.tmp)
        passed = sum(1 for ok, _ in self.results if ok)
        failed = len(self.results) - passed
        print("%d passed, %d failed" % (passed, failed))
        return 1 if failed or not passed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(Checker(sys.argv[1], sys.argv[2]).main())
