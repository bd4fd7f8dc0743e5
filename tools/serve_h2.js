// Serves a folder over HTTP/2 with text gzip-compressed, as GitHub Pages serves the site, for
// tools/lighthouse.py. Browsers speak HTTP/2 only over TLS: the certificate is a throwaway one
// that lighthouse.py makes, and the browser it starts is told to accept it.
//   node tools/serve_h2.js FOLDER KEY.pem CERT.pem   (prints the port it listens on)
const fs = require("fs");
const http2 = require("http2");
const path = require("path");
const zlib = require("zlib");

const [root, keyFile, certFile] = process.argv.slice(2).map((arg) => path.resolve(arg));
const TYPES = {
  ".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript",
  ".svg": "image/svg+xml", ".json": "application/json", ".png": "image/png",
  ".woff2": "font/woff2", ".ico": "image/x-icon", ".txt": "text/plain", ".xml": "text/xml",
  ".map": "application/json",
};
const COMPRESSED = new Set([".html", ".css", ".js", ".svg", ".json", ".txt", ".xml", ".ico", ".map"]);

function fileFor(urlPath) {
  let file = path.join(root, decodeURIComponent(urlPath.split("?")[0]));
  if (file !== root && !file.startsWith(root + path.sep)) return null; // outside the folder
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "index.html");
  return fs.existsSync(file) ? file : null;
}

const server = http2.createSecureServer({ key: fs.readFileSync(keyFile), cert: fs.readFileSync(certFile) });
server.on("stream", (stream, headers) => {
  const file = fileFor(headers[":path"]);
  if (!file) {
    stream.respond({ ":status": 404 });
    stream.end();
    return;
  }
  const type = path.extname(file);
  let body = fs.readFileSync(file);
  const response = { ":status": 200, "content-type": TYPES[type] || "application/octet-stream", "cache-control": "max-age=600" };
  if (COMPRESSED.has(type) && /\bgzip\b/.test(headers["accept-encoding"] || "")) {
    body = zlib.gzipSync(body, { level: 6 });
    response["content-encoding"] = "gzip";
  }
  response["content-length"] = body.length;
  stream.respond(response);
  stream.end(body);
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
