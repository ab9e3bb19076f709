// The VS Code extension end to end, in a real VS Code: code-server (VS Code 1.100 served to a
// browser) runs the packaged platform .vsix, with the server inside, and a headless Chromium
// shows the workbench. suite/, a development extension beside it, opens a binary model,
// completes, hovers, breaks and mends it, and saves; this driver answers the "Replace …?"
// confirmation in the page as a user would, then checks what the suite saw, the status bar,
// and the bytes written (with `onnx diff` against the model as it was: one change, the
// operator, and the weight's bytes the same).
//
//   node tests/e2e/run.mjs --vsix onnx-text-platform.vsix --cli ../../target/debug/onnx
//
// Needs chromium and `tests/e2e/install.sh` (code-server, puppeteer-core). Where either is
// missing it fails under CI=true, and elsewhere says SKIPPED and exits 0.
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const DEADLINE_MS = 180_000;

function argument(name) {
  const at = process.argv.indexOf(name);
  if (at < 0 || at + 1 >= process.argv.length) {
    throw new Error(`run.mjs: ${name} PATH is required`);
  }
  return path.resolve(process.argv[at + 1]);
}

function cannotRun(why) {
  if (process.env.CI) {
    console.error(`VS Code end-to-end test cannot run in CI: ${why}`);
    process.exit(1);
  }
  console.error(`SKIPPED the VS Code end-to-end test: ${why}`);
  process.exit(0);
}

function findChromium() {
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    const found = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" });
    if (found.status === 0) {
      return found.stdout.trim();
    }
  }
  return undefined;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function check(failures, ok, what) {
  if (!ok) {
    failures.push(what);
  }
}

/** The model: a 4 KiB weight whose name needs quotes, which the text shows by reference. */
function writeModel(cli, dir) {
  const values = Array.from({ length: 1024 }, (_, i) => String(i % 5)).join(", ");
  const text =
    `<ir_version: 10, opset_import: ["" : 21]>\n` +
    `main (float[1024] x) => (float[1024] y) <float[1024] "layer1.weight" = {${values}}> {\n` +
    `  y = Add (x, "layer1.weight")\n}\n`;
  fs.writeFileSync(path.join(dir, "model.onnxtxt"), text);
  const converted = spawnSync(cli, ["convert", "model.onnxtxt", "model.onnx"], { cwd: dir, encoding: "utf8" });
  if (converted.status !== 0) {
    throw new Error(`onnx convert failed: ${converted.stderr}`);
  }
  fs.rmSync(path.join(dir, "model.onnxtxt"));
  fs.copyFileSync(path.join(dir, "model.onnx"), path.join(dir, "..", "before.onnx"));
  return path.join(dir, "model.onnx");
}

async function main() {
  const vsix = argument("--vsix");
  const cli = argument("--cli");
  const codeServer = path.join(here, "node_modules", ".bin", "code-server");
  if (!fs.existsSync(codeServer) || !fs.existsSync(path.join(here, "node_modules", "puppeteer-core"))) {
    cannotRun("code-server and puppeteer-core are not installed (bash tests/e2e/install.sh)");
  }
  const chromium = findChromium();
  if (!chromium) {
    cannotRun("no Chromium (apt-get install chromium)");
  }
  const { default: puppeteer } = await import("puppeteer-core");

  const root = fs.mkdtempSync(path.join(os.tmpdir(), "onnx-vscode-e2e-"));
  const workspace = path.join(root, "workspace");
  fs.mkdirSync(workspace);
  const model = writeModel(cli, workspace);
  const out = path.join(root, "result.json");
  const logs = [];
  const log = (line) => logs.push(line);

  // Installed as a user installs a .vsix; the server it starts is the one the package holds.
  const extensions = path.join(root, "extensions");
  const installed = spawnSync(codeServer, ["--extensions-dir", extensions, "--install-extension", vsix], {
    encoding: "utf8",
  });
  if (installed.status !== 0) {
    throw new Error(`code-server could not install ${vsix}: ${installed.stdout}${installed.stderr}`);
  }

  const port = await freePort();
  const server = spawn(
    codeServer,
    [
      "--auth", "none",
      "--bind-addr", `127.0.0.1:${port}`,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--extensions-dir", extensions,
      "--user-data-dir", path.join(root, "user-data"),
      workspace,
    ],
    {
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ONNX_E2E_MODEL: model, ONNX_E2E_OUT: out },
    },
  );
  server.stdout.on("data", (data) => log(`code-server: ${data}`));
  server.stderr.on("data", (data) => log(`code-server: ${data}`));
  let browser;
  const failures = [];
  let result;
  let dialog;
  let statusBar = [];
  try {
    const started = Date.now();
    while (!logs.some((line) => line.includes("HTTP server listening"))) {
      if (Date.now() - started > 30_000 || server.exitCode !== null) {
        throw new Error("code-server did not start");
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const remote = (p) => `vscode-remote://127.0.0.1:${port}${p}`;
    const payload = JSON.stringify([
      ["extensionDevelopmentPath", remote(path.join(here, "suite"))],
      ["skipWelcome", "true"],
    ]);
    browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    page.on("console", (message) => log(`page ${message.type()}: ${message.text()}`));
    page.on("pageerror", (error) => log(`page error: ${error}`));
    await page.goto(
      `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(payload)}`,
    );

    // Until the suite is done: answer the confirmation that saving shows.
    while (!fs.existsSync(out)) {
      if (Date.now() - started > DEADLINE_MS) {
        throw new Error(`the suite wrote nothing within ${DEADLINE_MS / 1000} s`);
      }
      const seen = await page.evaluate(() => {
        const box = document.querySelector(".monaco-dialog-box");
        if (!box) {
          return undefined;
        }
        const button = [...box.querySelectorAll(".monaco-button")].find((b) => b.textContent.trim() === "Replace");
        if (!button) {
          return undefined;
        }
        const message = box.querySelector(".dialog-message-text")?.textContent ?? "";
        button.click();
        return message;
      });
      if (seen !== undefined) {
        dialog = seen;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    result = JSON.parse(fs.readFileSync(out, "utf8"));
    statusBar = await page.evaluate(() =>
      [...document.querySelectorAll(".statusbar-item")].map((item) => item.textContent.trim()).filter((t) => t.includes("ONNX")),
    );
  } catch (error) {
    failures.push(String(error));
  } finally {
    await browser?.close().catch(() => undefined);
    try {
      process.kill(-server.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }

  if (result) {
    check(failures, result.error === undefined, `the suite failed: ${result.error}`);
    check(failures, result.uri?.startsWith("onnx-text:"), `the binary opened as ${result.uri}, not its text`);
    check(failures, result.languageId === "onnx", `the text's language is ${result.languageId}`);
    check(failures, result.text?.includes('"location": "model.onnx"'), "the text does not refer to the model's bytes");
    const offered = new Map((result.completion ?? []).map((item) => [item.label, item.insert]));
    check(failures, offered.has("x"), "completion lacks the input x");
    check(failures, offered.get("layer1.weight") === '"layer1.weight"', `completion of the weight inserts ${offered.get("layer1.weight")}`);
    check(failures, /1,?024/.test(result.hover ?? "") && /mean/.test(result.hover ?? ""), `hover on the weight: ${result.hover}`);
    check(failures, (result.diagnostics ?? []).some((d) => d.code === "undefined-value"), `diagnostics: ${JSON.stringify(result.diagnostics)}`);
    check(failures, result.mended === '  y = Sub (x, "layer1.weight")', `the accepted completion gave ${result.mended}`);
    check(failures, result.saved === true && result.dirty_after_save === false, `save: ${result.saved}, dirty after: ${result.dirty_after_save}`);
    check(failures, dialog?.startsWith("Replace model.onnx"), `the save asked ${JSON.stringify(dialog)}`);
    check(failures, statusBar.some((text) => /ONNX · 1 nodes/.test(text)), `status bar: ${JSON.stringify(statusBar)}`);
    const diff = spawnSync(cli, ["diff", path.join(root, "before.onnx"), model, "--json"], { encoding: "utf8" });
    const changes = JSON.parse(diff.stdout || "{}").changes ?? [];
    check(
      failures,
      changes.length === 1 && changes[0].detail === "operator Add → Sub",
      `the binary written back differs from the model by: ${JSON.stringify(changes)}`,
    );
  }
  if (failures.length > 0) {
    console.error(logs.join("").split("\n").slice(-60).join("\n"));
    console.error(`VS Code end-to-end test FAILED (files in ${root}):\n- ${failures.join("\n- ")}`);
    process.exit(1);
  }
  fs.rmSync(root, { recursive: true, force: true });
  console.log(
    `VS Code end-to-end test passed: code-server ${JSON.stringify(result.uri)} opened, ` +
      `${result.completion.length} completion items, diagnostic ${result.diagnostics[0].code}, ` +
      `saved after "${dialog}", one change written: Add → Sub`,
  );
}

main().catch((error) => {
  console.error(`VS Code end-to-end test FAILED: ${error.stack ?? error}`);
  process.exit(1);
});
