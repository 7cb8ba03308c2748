#!/usr/bin/python3
"""Docs that cannot lie: runs the shell examples of README.md and every Markdown page.

Conventions in the Markdown (DEVELOPMENT.md, "Docs that are run"):
  ```sh                  each command is run from a scratch folder holding the source tree's
                         top-level entries and build/; it must exit 0, or N when its comment
                         says `exit N`
  ```console             `$ COMMAND` lines are run the same way; the lines under one are output
                         the command must print, in that order (a `...` in a line matches any
                         text); lines it does not show may come between them
  ```sh not-run=WHY      not run here (root, a device, a lab, a long run): counted and listed
  ```LANG file=NAME      written to NAME in the scratch folder before the page's later blocks
  ```python run          run with /usr/bin/python3 and build/python on PYTHONPATH
A block without an info string whose first line looks like a command is an error: say how
it is run. Files the examples name (captures, reports, waivers) are made by this script.

Also checks that every relative link of every page resolves, and the mutation matrix page
(suite/reference_nic/MUTATION_MATRIX.md) against the quirks the built roceconf has and, with
--mutation-output, against the table engine_tests prints. Exit 0 when all holds, 1 otherwise.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SHELL_LANGS = {"sh", "shell", "bash", "console"}
COMMAND_LOOKING = re.compile(r"^(\$ |sudo |build/|\./scripts/|scripts/|cmake |roceconf |tshark )")
SKIP_DIRS = {".git", "build", "node_modules"}
# Pages written on other branches at the same time, linked from README.md before they land.
# Remove each from this list once it exists; nothing else may be missing.
PENDING_PAGES: set = set()
MATRIX = "suite/reference_nic/MUTATION_MATRIX.md"
NO_PYTHON_CASES = "--cases needs the Python module, which is not built"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


class Block:
    def __init__(self, page, line, lang, attrs, lines):
        self.page, self.line, self.lang, self.attrs, self.lines = page, line, lang, attrs, lines

    def where(self):
        return f"{self.page}:{self.line}"


def parse_blocks(page, text):
    blocks, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+)(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3).strip()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not re.match(r"^\s*" + fence + r"\s*$", lines[i]):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1
        words = info.split()
        lang = words[0] if words else ""
        attrs = {}
        for w in words[1:]:
            k, _, v = w.partition("=")
            attrs[k] = v
        blocks.append(Block(page, start, lang, attrs, body))
    return blocks


def commands_of(block):
    """(command, expected output lines, expected exit status) of a sh or console block."""
    out, cur, expect, cont = [], None, [], False
    for raw in block.lines:
        if block.lang == "console" and not cont:
            if raw.startswith("$ "):
                if cur is not None:
                    out.append((cur, expect))
                cur, expect = raw[2:], []
                cont = raw.rstrip().endswith("\\")
            elif cur is not None and raw.strip():
                expect.append(raw.rstrip())
            continue
        if cont:
            cur += "\n" + raw
            cont = raw.rstrip().endswith("\\")
            continue
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        if cur is not None:
            out.append((cur, expect))
        cur, expect = raw, []
        cont = s.endswith("\\")
    if cur is not None:
        out.append((cur, expect))
    result = []
    for cmd, exp in out:
        m = re.search(r"#[^'\"]*\bexit (\d+)", cmd.split("\n")[-1])
        result.append((cmd, exp, int(m.group(1)) if m else 0))
    return result


def line_matches(expected, actual):
    parts = [re.escape(p) for p in expected.split("...")]
    return re.fullmatch(".*".join(parts), actual.rstrip()) is not None


def output_shown(expected, actual_text):
    actual = actual_text.split("\n")
    j = 0
    for e in expected:
        while j < len(actual) and not line_matches(e, actual[j]):
            j += 1
        if j == len(actual):
            return e
        j += 1
    return None


class Fixtures:
    """The files the examples name, made once and copied into each page's folder."""

    def __init__(self, source, build, cache):
        self.source, self.build, self.cache = source, build, cache
        self.shared = os.path.normpath(os.path.join(source, "..", "shared", "captures"))

    def roceconf(self, *args, cwd=None):
        return subprocess.run([os.path.join(self.build, "roceconf"), *args], cwd=cwd or self.cache,
                              capture_output=True, text=True, timeout=120)

    def report(self, name, quirks):
        path = os.path.join(self.cache, name)
        if not os.path.exists(path):
            args = ["run", "--json", path, "--html", path + ".html", "--junit", path + ".xml",
                    "--pcap", path + ".pcapng"]
            for q in quirks:
                args += ["--quirk", q]
            self.roceconf(*args)
        return path

    def gen(self, name, frames):
        path = os.path.join(self.cache, name)
        if not os.path.exists(path):
            subprocess.run([os.path.join(self.build, "roceconf-gen"), "--frames", str(frames),
                            "--out", path], check=True, capture_output=True, timeout=120)
        return path

    def make(self, name, folder):
        dest = os.path.join(folder, name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        clean = lambda: self.report("clean.json", [])
        quirky = lambda: self.report("quirk.json", ["psn-gap-ack"])
        makers = {
            "capture.pcapng": lambda: os.path.join(self.source, "samples", "rc-session.pcapng"),
            "capture.pcap": lambda: self.gen("small.pcap", 2000),
            "file.pcap": lambda: self.gen("small.pcap", 2000),
            "big.pcap": lambda: self.gen("small.pcap", 2000),
            "cap.pcap": lambda: self.gen("small.pcap", 2000),
            "gen.pcap": lambda: self.gen("gen.pcap", 20000),
            "my-case.rcase": lambda: os.path.join(self.source, "cases", "psn", "gap-naks-once.rcase"),
            "my_cases.py": lambda: os.path.join(self.source, "examples",
                                                sorted(f for f in os.listdir(
                                                    os.path.join(self.source, "examples"))
                                                       if f.endswith(".py"))[0]),
            "before.json": clean, "a.json": clean, "a/report.json": clean,
            "after.json": quirky, "b.json": quirky, "b/report.json": quirky,
            "rxe_ib_write_bw_rc_loss_nak.pcap":
                lambda: os.path.join(self.shared, "rxe_ib_write_bw_rc_loss_nak.pcap"),
        }
        if name == "waivers.txt":
            with open(dest, "w") as f:
                f.write("# known on this target\npsn/gap-naks-once  until=2099-12-31  "
                        "the responder NAKs a gap twice (vendor ticket 1234)\n")
            return True
        src = makers[name]()
        if not os.path.exists(src):
            return False
        shutil.copy(src, dest)
        return True

    NAMES = ["capture.pcapng", "capture.pcap", "file.pcap", "big.pcap", "cap.pcap", "gen.pcap",
             "my-case.rcase", "my_cases.py", "before.json", "after.json", "a/report.json",
             "b/report.json", "a.json", "b.json", "waivers.txt",
             "rxe_ib_write_bw_rc_loss_nak.pcap"]

    def needed(self, text):
        return [n for n in self.NAMES
                if re.search(r"(^|[\s/=])" + re.escape(n) + r"($|[\s|;])", text, re.M)
                and not re.search(r"[\w.-]/" + re.escape(n), text)]


def scratch(source, build, root):
    os.makedirs(root)
    for entry in os.listdir(source):
        if entry in (".git", "build") or entry.startswith("build"):
            continue
        os.symlink(os.path.join(source, entry), os.path.join(root, entry))
    os.symlink(build, os.path.join(root, "build"))
    os.makedirs(os.path.join(root, ".bin"))
    os.symlink(os.path.join(build, "roceconf"), os.path.join(root, ".bin", "roceconf"))
    os.chmod(root, 0o777)


def run_command(cmd, cwd, build, timeout):
    env = dict(os.environ)
    env["PATH"] = os.path.join(cwd, ".bin") + os.pathsep + env.get("PATH", "")
    env["HOME"] = cwd
    env.pop("PYTHONPATH", None)
    env["WIRESHARK_PLUGIN_DIR"] = os.path.join(build, "dissector", "wireshark", "plugins")
    argv = ["/bin/bash", "-o", "pipefail", "-c", cmd]
    if os.geteuid() == 0 and re.search(r"(^|\|\s*)tshark\b", cmd):
        # tshark as root loads only global plugins; the build tree's plugin is for a user.
        argv = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] + argv
    t0 = time.monotonic()
    try:
        r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=timeout, errors="replace")
        return r.returncode, r.stdout, r.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout} s", time.monotonic() - t0


def run_page(page, blocks, args, fixtures, root):
    folder = os.path.join(root, re.sub(r"[^\w]", "_", page))
    scratch(args.source, args.build, folder)
    text = "\n".join("\n".join(b.lines) for b in blocks if b.lang in SHELL_LANGS
                     and "not-run" not in b.attrs)
    missing = []
    for name in fixtures.needed(text):
        if not fixtures.make(name, folder):
            missing.append(name)
    ran, skipped, failures, log = 0, [], [], []
    for b in blocks:
        if "file" in b.attrs:
            with open(os.path.join(folder, b.attrs["file"]), "w") as f:
                f.write("\n".join(b.lines) + "\n")
        if b.lang == "python" and "run" in b.attrs:
            code, out, err, secs = run_command(
                "PYTHONPATH=build/python /usr/bin/python3 -c " + shlex_quote("\n".join(b.lines)),
                folder, args.build, args.timeout)
            ran += 1
            log.append(f"{b.where()}: python block, exit {code}, {secs:.1f} s")
            if code != 0:
                failures.append(f"{b.where()}: the Python example exits {code}:\n{err[-2000:]}")
            continue
        if b.lang not in SHELL_LANGS:
            if not b.lang and b.lines and COMMAND_LOOKING.match(b.lines[0].lstrip()):
                failures.append(f"{b.where()}: a command block without an info string "
                                "(sh, console, or sh not-run=WHY)")
            continue
        for cmd, expect, status in commands_of(b):
            first = cmd.split("\n")[0]
            if "not-run" in b.attrs:
                skipped.append((b.where(), b.attrs["not-run"] or "not-run", first))
                continue
            gone = [n for n in missing if n in cmd]
            if gone:
                skipped.append((b.where(), f"no {gone[0]} on this machine", first))
                continue
            code, out, err, secs = run_command(cmd, folder, args.build, args.timeout)
            if NO_PYTHON_CASES in err:  # a build without libpython3-dev: said, not hidden
                skipped.append((b.where(), "roceconf built without Python cases", first))
                continue
            ran += 1
            log.append(f"{b.where()}: {first[:90]} -> exit {code}, {secs:.1f} s")
            problem = None
            if code != status:
                problem = f"exits {code}, the page says {status}"
            elif expect:
                lost = output_shown(expect, out + "\n" + err)
                if lost is not None:
                    problem = f"does not print the line the page shows:\n    {lost}"
            if problem:
                failures.append(f"{b.where()}: `{first}` {problem}\n  stdout: {out[-1500:]}\n"
                                f"  stderr: {err[-1500:]}")
    return ran, skipped, failures, log


def shlex_quote(s):
    return "'" + s.replace("'", "'\"'\"'") + "'"


def pages_of(source):
    found = []
    for dirpath, dirnames, filenames in os.walk(source):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build")
                             and not d.startswith("."))
        for f in sorted(filenames):
            if f.endswith(".md"):
                found.append(os.path.relpath(os.path.join(dirpath, f), source))
    return found


def check_links(source, pages):
    bad = []
    for page in pages:
        text = open(os.path.join(source, page), encoding="utf-8").read()
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # links inside examples are not links
        for m in LINK.finditer(text):
            target = m.group(1).split("#")[0]
            if not target or re.match(r"^[a-z]+:", target):
                continue
            path = os.path.normpath(os.path.join(os.path.dirname(page), target))
            if os.path.exists(os.path.join(source, path)) or path in PENDING_PAGES:
                continue
            bad.append(f"{page}: the link to {target} leads nowhere")
    return bad


def matrix_rows(text):
    return {m.group(1): m.group(0) for m in
            re.finditer(r"^\| `([\w-]+)` \| .*\|$", text, re.M)}


def check_matrix(source, build, mutation_output):
    page = open(os.path.join(source, MATRIX), encoding="utf-8").read()
    rows = matrix_rows(page)
    help_text = subprocess.run([os.path.join(build, "roceconf"), "run", "--help"],
                               capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"--quirk TEXT \.\.\.[^:]*:\s*(.*)", help_text)
    quirks = set(m.group(1).split()) if m else set()
    bad = [f"{MATRIX}: no row for the defect {q}" for q in sorted(quirks - set(rows))]
    bad += [f"{MATRIX}: a row for {q}, which roceconf does not have" for q in sorted(set(rows) - quirks)]
    if mutation_output:
        printed = matrix_rows(open(mutation_output, encoding="utf-8").read())
        for q, line in printed.items():
            if rows.get(q) != line:
                bad.append(f"{MATRIX}: the row of {q} is not what engine_tests prints:\n"
                           f"    page:    {rows.get(q)}\n    printed: {line}")
        for q in set(rows) - set(printed):
            if "| fuzz | none" not in rows[q]:
                bad.append(f"{MATRIX}: {q} is not in engine_tests' table, so must be a fuzz row")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--build", default=None)
    ap.add_argument("--page", action="append", help="only these pages (paths from the source)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=60, help="seconds a command may take")
    ap.add_argument("--mutation-output", help="the output of engine_tests "
                    "--gtest_filter=MutationMatrix.EachQuirkFailsACaseOfItsArea")
    ap.add_argument("--no-examples", action="store_true", help="links and tables only")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.source = os.path.abspath(args.source)
    args.build = os.path.abspath(args.build or os.path.join(args.source, "build"))
    if not os.path.exists(os.path.join(args.build, "roceconf")):
        print(f"check_docs: error: no {args.build}/roceconf: build first (scripts/build.sh)",
              file=sys.stderr)
        return 2
    pages = args.page or pages_of(args.source)
    blocks = {p: parse_blocks(p, open(os.path.join(args.source, p), encoding="utf-8").read())
              for p in pages}
    failures = check_links(args.source, pages_of(args.source)) + check_matrix(
        args.source, args.build, args.mutation_output)
    if args.no_examples:
        for f in failures:
            print(f"DRIFT {f}")
        print(f"docs: links and the mutation matrix, {len(failures)} problems")
        return 1 if failures else 0
    root = tempfile.mkdtemp(prefix="roceconf-docs-")
    os.chmod(root, 0o755)
    cache = os.path.join(root, ".fixtures")
    os.makedirs(cache)
    fixtures = Fixtures(args.source, args.build, cache)
    fixtures.report("clean.json", [])  # made before the pages run in parallel
    fixtures.report("quirk.json", ["psn-gap-ack"])
    fixtures.gen("small.pcap", 2000)
    ran, skipped, logs = 0, [], []
    t0 = time.monotonic()
    # The slowest pages first, so that two workers finish together.
    order = sorted(pages, key=lambda p: -sum(len(b.lines) for b in blocks[p]
                                              if b.lang in SHELL_LANGS))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {pool.submit(run_page, p, blocks[p], args, fixtures, root): p for p in order}
        for fut in concurrent.futures.as_completed(futures):
            r, s, f, log = fut.result()
            ran, skipped, failures, logs = ran + r, skipped + s, failures + f, logs + log
    if args.verbose:
        print("\n".join(sorted(logs)))
    print(f"docs: {ran} examples run in {time.monotonic() - t0:.1f} s, {len(skipped)} not run, "
          f"{len(pages)} pages")
    for where, why, cmd in sorted(skipped):
        print(f"  not run ({why}): {where}: {cmd[:100]}")
    for f in failures:
        print(f"DRIFT {f}")
    if not failures:
        shutil.rmtree(root, ignore_errors=True)
    else:
        print(f"(the scratch folders are kept in {root})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
