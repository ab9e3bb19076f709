// The VS Code side of onnx-lsp: starts the server for `onnx` documents, opens binary models
// (`.onnx`) as text documents that save back to the binary, and converts between the binary
// and text forms. Everything that understands ONNX lives in the server; this file only wires
// it to the editor.
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, State } from "vscode-languageclient/node";

let client: LanguageClient | undefined;
let status: vscode.StatusBarItem | undefined;

interface TextResult {
  text: string;
}

interface ConvertResult {
  destination: string;
  /** Rules of meaning the model breaks; it is converted as written all the same. */
  warnings?: string[];
}

/** The scheme of a binary model's text: `onnx-text:/dir/model.onnx.onnxtxt` is the text of
 * `/dir/model.onnx`, read from the server and saved back through it. */
const TEXT_OF_BINARY = "onnx-text";

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.command = "onnx.restartServer";
  status.show();
  const files = new BinaryModelText(() => client);
  context.subscriptions.push(
    status,
    vscode.workspace.registerFileSystemProvider(TEXT_OF_BINARY, files, { isCaseSensitive: true }),
    vscode.window.registerCustomEditorProvider("onnx.binaryModel", new BinaryModelEditor(), {
      supportsMultipleEditorsPerDocument: true,
    }),
    vscode.commands.registerCommand("onnx.openBinaryAsText", openBinaryAsText),
    vscode.commands.registerCommand("onnx.convertToText", (uri?: vscode.Uri) => convert(uri, ".onnxtxt")),
    vscode.commands.registerCommand("onnx.convertToBinary", (uri?: vscode.Uri) => convert(uri, ".onnx")),
    vscode.commands.registerCommand("onnx.format", () =>
      vscode.commands.executeCommand("editor.action.formatDocument"),
    ),
    vscode.commands.registerCommand("onnx.restartServer", () => restart(context)),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("onnx.server.path")) {
        void restart(context);
      }
    }),
    vscode.window.onDidChangeActiveTextEditor(() => void showModelSummary()),
    vscode.workspace.onDidChangeTextDocument((event) => {
      if (event.document === vscode.window.activeTextEditor?.document) {
        summaryAfterEdits();
      }
    }),
  );
  await start(context);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}

/** The server to run: `onnx.server.path` when set, else the one packaged with the extension
 * (platform packages hold it in `server/`), else `onnx-lsp` on the PATH (where
 * `cargo install` and `pip install` put it). */
function serverCommand(context: vscode.ExtensionContext): { command: string; from: string } {
  const configured = vscode.workspace.getConfiguration("onnx").get<string>("server.path")?.trim();
  if (configured) {
    return { command: configured, from: "the setting onnx.server.path" };
  }
  const packaged = path.join(context.extensionPath, "server", process.platform === "win32" ? "onnx-lsp.exe" : "onnx-lsp");
  if (fs.existsSync(packaged)) {
    return { command: packaged, from: "this extension's package" };
  }
  return { command: "onnx-lsp", from: "the PATH" };
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const { command, from } = serverCommand(context);
  const serverOptions: ServerOptions = { command, args: [] };
  const clientOptions: LanguageClientOptions = {
    // Text files, and binary models opened as text (the onnx-text scheme).
    documentSelector: [
      { language: "onnx", scheme: "file" },
      { language: "onnx", scheme: "untitled" },
      { language: "onnx", scheme: TEXT_OF_BINARY },
    ],
  };
  // The id "onnx" makes `onnx.trace.server` the trace setting.
  client = new LanguageClient("onnx", "ONNX language server", serverOptions, clientOptions);
  client.onDidChangeState((event) => {
    showState(event.newState, command, from);
    // A model opened while the server was starting (opening a `.onnx` starts it) gets its
    // summary once the server runs.
    if (event.newState === State.Running) {
      void showModelSummary();
    }
  });
  showState(State.Starting, command, from);
  try {
    await client.start();
    void showModelSummary();
  } catch (error) {
    showState(State.Stopped, command, from);
    // The usual cause: onnx-lsp is not installed, or not on the PATH VS Code sees.
    const choice = await vscode.window.showErrorMessage(
      `The ONNX language server could not start (${command}, from ${from}): ${String(error)}. ` +
        "Install it (`pip install onnx-text`, or `cargo install --locked --path lsp` in the onnx-text " +
        "repository), or set `onnx.server.path` to the onnx-lsp binary.",
      "Open Settings",
    );
    if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "onnx.server.path");
    }
  }
}

async function restart(context: vscode.ExtensionContext): Promise<void> {
  const old = client;
  client = undefined;
  try {
    await old?.stop();
  } catch {
    // A server that already died cannot be stopped; a new one starts all the same.
  }
  await start(context);
}

function showState(state: State, command: string, from: string): void {
  if (!status) {
    return;
  }
  const [icon, word] =
    state === State.Running ? ["$(check)", "running"] : state === State.Starting ? ["$(sync~spin)", "starting"] : ["$(error)", "stopped"];
  status.text = `${icon} ONNX`;
  status.tooltip = `ONNX language server ${word}: ${command} (from ${from}). Click to restart it.`;
}

let summaryTimer: ReturnType<typeof setTimeout> | undefined;

/** The summary again once the user pauses typing, so the node count follows the edits. */
function summaryAfterEdits(): void {
  if (summaryTimer) {
    clearTimeout(summaryTimer);
  }
  summaryTimer = setTimeout(() => void showModelSummary(), 500);
}

/** The active model's size beside the server's state: its node count and opsets, from the
 * outline the server gives. */
async function showModelSummary(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!status || !client || client.state !== State.Running || editor?.document.languageId !== "onnx") {
    return;
  }
  try {
    const symbols = await client.sendRequest<vscode.DocumentSymbol[] | null>("textDocument/documentSymbol", {
      textDocument: { uri: editor.document.uri.toString() },
    });
    const model = symbols?.[0];
    if (!model) {
      return;
    }
    let nodes = 0;
    const count = (list: vscode.DocumentSymbol[] | undefined): void => {
      for (const symbol of list ?? []) {
        // 25: the protocol's SymbolKind.Operator, which the server gives nodes.
        nodes += Number(symbol.kind) === 25 ? 1 : 0;
        count(symbol.children);
      }
    };
    count(model.children);
    status.text = `$(check) ONNX · ${nodes} nodes`;
    status.tooltip = `${model.detail ?? ""}\n${status.tooltip ?? ""}`;
  } catch {
    // A document being edited may have no outline yet; the state stays shown.
  }
}

/** The onnx-text URI of a binary model's text, and back. */
function textOf(binary: vscode.Uri): vscode.Uri {
  return binary.with({ scheme: TEXT_OF_BINARY, path: binary.path + ".onnxtxt" });
}

function binaryOf(text: vscode.Uri): vscode.Uri {
  return text.with({ scheme: "file", path: text.path.replace(/\.onnxtxt$/, "") });
}

/** A binary model's text as a file system: reading asks the server for the model's outline
 * (big tensors by reference into the model), writing asks it to write the binary model back
 * from the text, atomically, after the user confirms replacing the file. Undo, the dirty
 * state and "revert" are the editor's own, as for any text file. */
class BinaryModelText implements vscode.FileSystemProvider {
  private readonly changes = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changes.event;
  /** Binaries the user agreed to replace on every save, this session. */
  private readonly replaceAlways = new Set<string>();
  /** Binaries this provider just wrote: their change events are our own save. */
  private readonly writing = new Set<string>();

  constructor(private readonly server: () => LanguageClient | undefined) {}

  watch(uri: vscode.Uri): vscode.Disposable {
    const binary = binaryOf(uri);
    const pattern = new vscode.RelativePattern(vscode.Uri.file(path.dirname(binary.fsPath)), path.basename(binary.fsPath));
    const watcher = vscode.workspace.createFileSystemWatcher(pattern);
    const changed = (type: vscode.FileChangeType) => () => {
      if (!this.writing.has(binary.toString())) {
        this.changes.fire([{ type, uri }]);
      }
    };
    watcher.onDidChange(changed(vscode.FileChangeType.Changed));
    watcher.onDidCreate(changed(vscode.FileChangeType.Changed));
    watcher.onDidDelete(changed(vscode.FileChangeType.Deleted));
    return watcher;
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const binary = await vscode.workspace.fs.stat(binaryOf(uri));
    return { type: vscode.FileType.File, ctime: binary.ctime, mtime: binary.mtime, size: binary.size };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const server = this.server();
    if (!server) {
      throw vscode.FileSystemError.Unavailable("the ONNX language server is not running");
    }
    try {
      const result = await server.sendRequest<TextResult>("onnx/binaryToText", { uri: binaryOf(uri).toString() });
      return Buffer.from(result.text, "utf8");
    } catch (error) {
      throw vscode.FileSystemError.Unavailable(String(error));
    }
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const server = this.server();
    if (!server) {
      throw vscode.FileSystemError.Unavailable("the ONNX language server is not running");
    }
    const binary = binaryOf(uri);
    const name = path.basename(binary.fsPath);
    if (!this.replaceAlways.has(binary.toString())) {
      const always = "Replace, and do not ask again for this file";
      const choice = await vscode.window.showWarningMessage(
        `Replace ${name} with the model this text says?`,
        { modal: true, detail: `${binary.fsPath} is written anew from the text (atomically).` },
        "Replace",
        always,
      );
      if (!choice) {
        throw vscode.FileSystemError.NoPermissions(`${name} was not replaced`);
      }
      if (choice === always) {
        this.replaceAlways.add(binary.toString());
      }
    }
    this.writing.add(binary.toString());
    try {
      const result = await server.sendRequest<ConvertResult>("onnx/saveBinary", {
        text: Buffer.from(content).toString("utf8"),
        destination: binary.toString(),
      });
      reportWarnings(result);
    } catch (error) {
      throw vscode.FileSystemError.NoPermissions(`${name} was not written: ${String(error)}`);
    } finally {
      // The watcher's event for our own write comes a moment later.
      setTimeout(() => this.writing.delete(binary.toString()), 1000);
    }
  }

  readDirectory(): [string, vscode.FileType][] {
    throw vscode.FileSystemError.NoPermissions("a model's text is a single file");
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions("a model's text is a single file");
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions("delete the .onnx file itself");
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions("rename the .onnx file itself");
  }
}

/** The editor VS Code offers for `.onnx` files: it opens the model's text in its place. */
class BinaryModelEditor implements vscode.CustomReadonlyEditorProvider {
  openCustomDocument(uri: vscode.Uri): vscode.CustomDocument {
    return { uri, dispose: () => undefined };
  }

  async resolveCustomEditor(document: vscode.CustomDocument, panel: vscode.WebviewPanel): Promise<void> {
    panel.webview.html = `<p>Opening ${escapeHtml(path.basename(document.uri.fsPath))} as text…</p>`;
    const column = panel.viewColumn;
    try {
      await vscode.window.showTextDocument(textOf(document.uri), { viewColumn: column, preview: false });
      panel.dispose();
    } catch (error) {
      panel.webview.html = `<p>Cannot open ${escapeHtml(document.uri.fsPath)} as text: ${escapeHtml(String(error))}</p>`;
    }
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c);
}

async function pickModel(given: vscode.Uri | undefined, filters: Record<string, string[]>): Promise<vscode.Uri | undefined> {
  if (given) {
    return given;
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active && Object.values(filters).some((exts) => exts.some((e) => active.fsPath.endsWith("." + e)))) {
    return active;
  }
  const picked = await vscode.window.showOpenDialog({ canSelectMany: false, filters });
  return picked?.[0];
}

/** Opens a binary model's text: saving it writes the binary model back. */
async function openBinaryAsText(given?: vscode.Uri): Promise<void> {
  const uri = await pickModel(given, { "ONNX models": ["onnx", "pb"] });
  if (!uri) {
    return;
  }
  try {
    await vscode.window.showTextDocument(textOf(uri), { preview: false });
  } catch (error) {
    vscode.window.showErrorMessage(`Cannot open ${path.basename(uri.fsPath)} as text: ${String(error)}`);
  }
}

function reportWarnings(result: ConvertResult): void {
  const warnings = result.warnings ?? [];
  if (warnings.length > 0) {
    const more = warnings.length > 1 ? ` (and ${warnings.length - 1} more)` : "";
    vscode.window.showWarningMessage(
      `Wrote ${result.destination}, a model that breaks ${warnings.length} rule(s): ${warnings[0]}${more}`,
    );
  } else {
    vscode.window.showInformationMessage(`Wrote ${result.destination}`);
  }
}

/** Converts a model file beside itself (model.onnx ⇄ model.onnxtxt) through the server,
 * asking before it replaces a file that exists. */
async function convert(given: vscode.Uri | undefined, extension: ".onnx" | ".onnxtxt"): Promise<void> {
  const source =
    extension === ".onnx"
      ? await pickModel(given, { "ONNX text models": ["onnxtxt", "onnxtext"] })
      : await pickModel(given, { "ONNX models": ["onnx", "pb"] });
  if (!source || !client) {
    return;
  }
  const parsed = path.parse(source.fsPath);
  const destination = vscode.Uri.file(path.join(parsed.dir, parsed.name + extension));
  if (fs.existsSync(destination.fsPath)) {
    const choice = await vscode.window.showWarningMessage(
      `${path.basename(destination.fsPath)} exists. Replace it?`,
      { modal: true, detail: `Converting ${parsed.base} writes ${destination.fsPath} anew.` },
      "Replace",
    );
    if (choice !== "Replace") {
      return;
    }
  }
  try {
    const result = await client.sendRequest<ConvertResult>("onnx/convert", {
      source: source.toString(),
      destination: destination.toString(),
    });
    reportWarnings(result);
  } catch (error) {
    vscode.window.showErrorMessage(`Cannot convert ${parsed.base}: ${String(error)}`);
  }
}
