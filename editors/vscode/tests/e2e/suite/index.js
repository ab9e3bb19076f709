// Runs inside VS Code's extension host (code-server's), loaded by tests/e2e/run.mjs as a
// development extension beside the installed package (not as VS Code's "extension tests":
// in that mode VS Code refuses every modal dialog, and saving asks one). It works the editor as a user would through VS
// Code's own commands: opens a binary model (our custom editor turns it into its text),
// completes, hovers, breaks the model and waits for the diagnostic, mends it by accepting a
// completion, and saves, which writes the binary back once the driver has clicked "Replace"
// in the confirmation. What it saw goes to $ONNX_E2E_OUT as JSON, a failure too.
const fs = require("fs");
const vscode = require("vscode");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it gives something, or fails naming what did not come. */
async function until(what, probe, ms = 30000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) {
      return value;
    }
    if (Date.now() > end) {
      throw new Error(`waited ${ms} ms for ${what}`);
    }
    await sleep(100);
  }
}

function label(item) {
  return typeof item.label === "string" ? item.label : item.label.label;
}

function insertText(item) {
  if (item.insertText === undefined) {
    return label(item);
  }
  return typeof item.insertText === "string" ? item.insertText : item.insertText.value;
}

async function completion(uri, position) {
  const list = await vscode.commands.executeCommand("vscode.executeCompletionItemProvider", uri, position);
  return list ? list.items : [];
}

function lineOf(document, needle) {
  for (let i = 0; i < document.lineCount; i++) {
    if (document.lineAt(i).text.includes(needle)) {
      return i;
    }
  }
  throw new Error(`no line with ${needle} in the model's text`);
}

async function steps(result) {
  const model = vscode.Uri.file(process.env.ONNX_E2E_MODEL);
  // A plain open: `.onnx` files open in the extension's custom editor, which shows the text.
  await vscode.commands.executeCommand("vscode.open", model);
  const editor = await until("the model's text in an editor", () => {
    const active = vscode.window.activeTextEditor;
    return active && active.document.uri.scheme === "onnx-text" ? active : undefined;
  });
  const document = editor.document;
  result.uri = document.uri.toString();
  result.languageId = document.languageId;
  result.text = document.getText();

  // Completion at the node's first input, once the server answers.
  const node = lineOf(document, "y = Add");
  const open = document.lineAt(node).text.indexOf("(") + 1;
  const items = await until("completion items", async () => {
    const found = await completion(document.uri, new vscode.Position(node, open));
    return found.length > 0 ? found : undefined;
  });
  result.completion = items.map((item) => ({ label: label(item), insert: insertText(item) }));

  // Hover on the weight where the initializer list names it.
  const weightLine = lineOf(document, '"layer1.weight" =');
  const weightColumn = document.lineAt(weightLine).text.indexOf('"layer1.weight"') + 2;
  const hovers = await vscode.commands.executeCommand(
    "vscode.executeHoverProvider",
    document.uri,
    new vscode.Position(weightLine, weightColumn),
  );
  result.hover = (hovers || [])
    .flatMap((hover) => hover.contents.map((part) => (typeof part === "string" ? part : part.value)))
    .join("\n");

  // Broken: an input nothing defines.
  await editor.edit((edit) => edit.replace(document.lineAt(node).range, "  y = Sub (x, missing)"));
  const diagnostics = await until("a diagnostic", () => {
    const found = vscode.languages.getDiagnostics(document.uri);
    return found.length > 0 ? found : undefined;
  });
  result.diagnostics = diagnostics.map((d) => ({
    line: d.range.start.line,
    code: typeof d.code === "object" && d.code !== null ? String(d.code.value) : String(d.code),
    message: d.message,
  }));

  // Mended by accepting the completion of what was typed: `layer` becomes the quoted name.
  await editor.edit((edit) => edit.replace(document.lineAt(node).range, "  y = Sub (x, layer)"));
  const typed = new vscode.Position(node, document.lineAt(node).text.indexOf(")"));
  const offered = await until("the weight among the completion items", async () =>
    (await completion(document.uri, typed)).find((item) => label(item) === "layer1.weight"),
  );
  const range = offered.range ? offered.range.replacing || offered.range : document.getWordRangeAtPosition(typed);
  await editor.edit((edit) => edit.replace(range, insertText(offered)));
  result.mended = document.lineAt(node).text;
  await until("the diagnostics to clear", () => vscode.languages.getDiagnostics(document.uri).length === 0);

  // Saved: the extension asks before it replaces the binary; the driver answers "Replace".
  result.saved = await document.save();
  result.dirty_after_save = document.isDirty;
}

exports.activate = function activate() {
  void run();
};

async function run() {
  const result = {};
  try {
    await steps(result);
  } catch (error) {
    result.error = String((error && error.stack) || error);
  }
  // Written whole under another name first: the driver reads it as soon as it appears.
  fs.writeFileSync(process.env.ONNX_E2E_OUT + ".part", JSON.stringify(result, null, 2));
  fs.renameSync(process.env.ONNX_E2E_OUT + ".part", process.env.ONNX_E2E_OUT);
}
