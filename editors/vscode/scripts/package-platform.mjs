// Packages the extension for one platform with the language server inside (`server/`), as
// rust-analyzer's platform packages are made, then checks what the package holds.
//
//   node scripts/package-platform.mjs --server PATH/TO/onnx-lsp [--target linux-x64] [--out FILE]
//
// The target defaults to this machine's (VS Code's names: linux-x64, linux-arm64, darwin-x64,
// darwin-arm64, win32-x64, …). The extension runs the packaged server unless
// `onnx.server.path` names another; the universal package (`npm run package`) has none and
// looks on PATH.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && at + 1 < args.length ? args[at + 1] : fallback;
};
const server = option("--server");
const target = option("--target", `${process.platform}-${process.arch}`);
const out = option("--out", join(root, `onnx-text-${target}.vsix`));
if (!server || !existsSync(server)) {
  console.error(`package-platform: --server must name the onnx-lsp binary (got ${server})`);
  process.exit(2);
}
const exe = target.startsWith("win32") ? "onnx-lsp.exe" : "onnx-lsp";
const serverDir = join(root, "server");
rmSync(serverDir, { recursive: true, force: true });
mkdirSync(serverDir);
copyFileSync(server, join(serverDir, exe));
chmodSync(join(serverDir, exe), 0o755);
// Release builds keep debug information (for profiles): the package does not need it. Where
// this machine's `strip` reads the target's binaries (it does for its own), it goes.
if (target === `${process.platform}-${process.arch}` && !target.startsWith("win32")) {
  try {
    execFileSync("strip", [join(serverDir, exe)], { stdio: "inherit" });
  } catch {
    console.warn("package-platform: no strip here; the server keeps its debug information");
  }
}
try {
  const vsce = join(root, "node_modules", ".bin", process.platform === "win32" ? "vsce.cmd" : "vsce");
  execFileSync(vsce, ["package", "--no-dependencies", "--target", target, "--out", out], { cwd: root, stdio: "inherit" });
} finally {
  rmSync(serverDir, { recursive: true, force: true });
}

// The package is a zip: its central directory lists every file.
const zip = readFileSync(out);
const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
const count = zip.readUInt16LE(end + 10);
let at = zip.readUInt32LE(end + 16);
const names = [];
const modes = new Map();
for (let i = 0; i < count; i += 1) {
  const nameLength = zip.readUInt16LE(at + 28);
  const extraLength = zip.readUInt16LE(at + 30);
  const commentLength = zip.readUInt16LE(at + 32);
  const name = zip.toString("utf8", at + 46, at + 46 + nameLength);
  names.push(name);
  modes.set(name, zip.readUInt32LE(at + 38) >>> 16);
  at += 46 + nameLength + extraLength + commentLength;
}
const problems = [];
const packaged = `extension/server/${exe}`;
if (!names.includes(packaged)) problems.push(`${packaged} is missing`);
if (!target.startsWith("win32") && ((modes.get(packaged) ?? 0) & 0o111) === 0) problems.push(`${packaged} is not executable`);
for (const name of names) {
  if (/(^|\/)\.gitignore$|\/src\/|\/node_modules\/|\.map$/.test(name)) problems.push(`${name} should not be packaged`);
}
for (const wanted of ["extension/out/extension.js", "extension/images/icon.png", "extension/package.json"]) {
  if (!names.includes(wanted)) problems.push(`${wanted} is missing`);
}
if (problems.length > 0) {
  console.error(`package-platform: ${out}:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`package-platform: ${out} (${target}) holds ${names.length} files, the server among them`);
