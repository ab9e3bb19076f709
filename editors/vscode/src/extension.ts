// The VS Code side of onnx-lsp: starts the server for `onnx` documents and adds commands to
// open a binary model as text and to convert between the binary and text forms. Everything
// that understands ONNX lives in the server; this file only wires it to the editor.
import * as path from "path";
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

interface TextResult {
  text: string;
}

interface ConvertResult {
  destination: string;
  /** Rules of meaning the model breaks; it is converted as written all the same. */
  warnings?: string[];
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const command = vscode.workspace.getConfiguration("onnx").get<string>("server.path") || "onnx-lsp";
  const serverOptions: ServerOptions = { command, args: [] };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ language: "onnx" }],
  };
  client = new LanguageClient("onnx-lsp", "ONNX language server", serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.commands.registerCommand("onnx.openBinaryAsText", openBinaryAsText),
    vscode.commands.registerCommand("onnx.convertToText", (uri?: vscode.Uri) => convert(uri, ".onnxtxt")),
    vscode.commands.registerCommand("onnx.convertToBinary", (uri?: vscode.Uri) => convert(uri, ".onnx")),
    vscode.commands.registerCommand("onnx.format", () =>
      vscode.commands.executeCommand("editor.action.formatDocument"),
    ),
  );
  try {
    await client.start();
  } catch (error) {
    // The usual cause: onnx-lsp is not installed, or not on the PATH VS Code sees.
    const choice = await vscode.window.showErrorMessage(
      `The ONNX language server could not start (${command}): ${String(error)}. ` +
        "Install it with `cargo install --path lsp` in the onnx-text repository, " +
        "or set `onnx.server.path` to the onnx-lsp binary.",
      "Open Settings",
    );
    if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "onnx.server.path");
    }
  }
}

export async function deactivate(): Promise<void> {
  await client?.stop();
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

/** Asks the server for the model's text and shows it in a new (unsaved) document. */
async function openBinaryAsText(given?: vscode.Uri): Promise<void> {
  const uri = await pickModel(given, { "ONNX models": ["onnx", "pb"] });
  if (!uri || !client) {
    return;
  }
  try {
    const result = await client.sendRequest<TextResult>("onnx/binaryToText", { uri: uri.toString() });
    const document = await vscode.workspace.openTextDocument({ language: "onnx", content: result.text });
    await vscode.window.showTextDocument(document);
  } catch (error) {
    vscode.window.showErrorMessage(`Cannot open ${path.basename(uri.fsPath)} as text: ${String(error)}`);
  }
}

/** Converts a model file beside itself (model.onnx ⇄ model.onnxtxt) through the server. */
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
  try {
    const result = await client.sendRequest<ConvertResult>("onnx/convert", {
      source: source.toString(),
      destination: destination.toString(),
    });
    const warnings = result.warnings ?? [];
    if (warnings.length > 0) {
      const more = warnings.length > 1 ? ` (and ${warnings.length - 1} more)` : "";
      vscode.window.showWarningMessage(
        `Wrote ${result.destination}, a model that breaks ${warnings.length} rule(s): ${warnings[0]}${more}`,
      );
    } else {
      vscode.window.showInformationMessage(`Wrote ${result.destination}`);
    }
  } catch (error) {
    vscode.window.showErrorMessage(`Cannot convert ${parsed.base}: ${String(error)}`);
  }
}
