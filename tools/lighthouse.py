"""Lighthouse performance of every page of the built site, beside the stock Jupyter Book's
notebook page, both served the same way: from this machine, over HTTP/2 and gzip-compressed, as
GitHub Pages serves them. A measurement for a maintainer, not a test.

    npm install --prefix /tmp/lighthouse lighthouse@13.5.0
    make test   # or any run of tests/test_site.py: it builds _build/html and the stock book
    .venv/bin/python tools/lighthouse.py /tmp/lighthouse/node_modules/.bin/lighthouse \
        [--runs 3] [--profiles mobile desktop] [--http1]

Prints one table per profile, mobile (Lighthouse's default: slow 4G, a 4x slower CPU) and
desktop: per page, the median over the runs of the performance score, LCP, TBT, CLS and the
bytes transferred. Both profiles simulate their network from the requests the page made, and
their CPU from what it did on this machine, so a busy machine lowers the scores: the load
average is printed. The protocol matters to the simulation: over HTTP/1 each stylesheet waits
for one of six connections, over HTTP/2 all share one. `--http1` serves as Python's
http.server does (HTTP/1.0, a connection per request), the way this tool measured before
2026-11-26. HTTP/2 needs Node (tools/serve_h2.js; Lighthouse needs it anyway) and openssl.
"""
import argparse
import functools
import gzip
import http.server
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "_build" / "html"
STOCK = ROOT / "_build" / "test-run" / "stock" / "_build" / "html"
COMPRESSED = {".html", ".css", ".js", ".svg", ".json", ".txt", ".xml", ".ico", ".map"}


class CompressingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves text gzip-compressed when the browser accepts it, as GitHub Pages does."""

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if path.suffix not in COMPRESSED or not accepts or not path.is_file():
            return super().send_head()
        body = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=600")
        self.end_headers()
        return io.BytesIO(body)

    def log_message(self, *args):
        pass


def serve_http1(directory):
    handler = functools.partial(CompressingHandler, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{httpd.server_address[1]}/"


SCRATCH = []  # the certificate's folder, made only when HTTP/2 is served
SERVERS = []  # the Node processes, stopped at exit


def throwaway_certificate():
    if not SCRATCH:
        SCRATCH.append(Path(tempfile.mkdtemp(prefix="lighthouse-")))
    key, cert = SCRATCH[0] / "key.pem", SCRATCH[0] / "cert.pem"
    if not key.exists():
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
             "-keyout", key, "-out", cert],
            check=True, capture_output=True,
        )
    return key, cert


def serve_h2(directory):
    node = shutil.which("node")
    if node is None:
        sys.exit("HTTP/2 needs Node (tools/serve_h2.js); install it, or pass --http1")
    key, cert = throwaway_certificate()
    server = subprocess.Popen(
        [node, ROOT / "tools" / "serve_h2.js", directory, key, cert], stdout=subprocess.PIPE, text=True
    )
    SERVERS.append(server)
    return f"https://127.0.0.1:{server.stdout.readline().strip()}/"


# Lighthouse's flags for each profile; mobile is its default.
PROFILES = {"mobile": [], "desktop": ["--preset=desktop"]}


def lighthouse(binary, url, profile):
    chrome_flags = "--headless=new --no-sandbox --disable-gpu"
    if url.startswith("https:"):
        chrome_flags += " --ignore-certificate-errors"  # the throwaway certificate
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        subprocess.run(
            [
                binary, url, *PROFILES[profile], "--only-categories=performance", "--quiet",
                "--output=json", f"--output-path={report}",
                f"--chrome-flags={chrome_flags}",
            ],
            check=True,
            env={**os.environ, "CHROME_PATH": os.environ.get("CHROME_PATH", "/usr/bin/chromium")},
        )
        result = json.loads(report.read_text())
    audits = result["audits"]
    return {
        "score": result["categories"]["performance"]["score"],
        "lcp": audits["largest-contentful-paint"]["numericValue"] / 1000,
        "tbt": audits["total-blocking-time"]["numericValue"],
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "bytes": audits["total-byte-weight"]["numericValue"],
    }


def main(binary, runs, profiles, serve):
    pages = [("stock: notebooks", serve(STOCK) + "notebooks.html")]
    site = serve(SITE)
    pages += [(path.stem, site + str(path.relative_to(SITE))) for path in sorted((SITE / "book").glob("*.html"))]
    for profile in profiles:
        protocol = "HTTP/2" if site.startswith("https:") else "HTTP/1.0"
        print(f"\n{profile}, {protocol}: load average {os.getloadavg()}; median of {runs} runs each")
        print(f"{'page':45} score   LCP s  TBT ms    CLS   kB transferred")
        for name, url in pages:
            results = [lighthouse(binary, url, profile) for _ in range(runs)]
            median = {key: statistics.median(result[key] for result in results) for key in results[0]}
            print(f"{name:45} {median['score']:.2f}  {median['lcp']:6.2f}  {median['tbt']:6.0f}  {median['cls']:5.3f}  {median['bytes'] / 1e3:8.1f}")
            sys.stdout.flush()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lighthouse", help="the lighthouse command, e.g. /tmp/lighthouse/node_modules/.bin/lighthouse")
    parser.add_argument("--runs", type=int, default=3, help="runs per page and profile; the median is printed")
    parser.add_argument("--profiles", nargs="+", choices=PROFILES, default=list(PROFILES))
    parser.add_argument("--http1", action="store_true", help="serve over HTTP/1.0, as this tool did before")
    args = parser.parse_args()
    try:
        main(args.lighthouse, args.runs, args.profiles, serve_http1 if args.http1 else serve_h2)
    finally:
        for server in SERVERS:
            server.terminate()
        for folder in SCRATCH:
            shutil.rmtree(folder, ignore_errors=True)
