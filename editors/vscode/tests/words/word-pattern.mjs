// The editor's word pattern (language-configuration.json) takes a whole name as one word:
// a quoted name with its quotes and escapes, a dotted name being typed, a number. Double-click,
// "change all occurrences" and completion's default range all use it.
import { readFileSync } from "node:fs";

const config = JSON.parse(readFileSync(new URL("../../language-configuration.json", import.meta.url), "utf8"));
const pattern = new RegExp(config.wordPattern, "g");
const cases = [
  ['y = Conv(x, "conv1.weight", b)', '"conv1.weight"'],
  ['y = Add(x, "390")', '"390"'],
  ['y = Add(x, "a \\"q\\" b")', '"a \\"q\\" b"'],
  ["y = Add(x, conv1.we", "conv1.we"],
  ["y = ai.onnx.ml.Normalizer(x)", "ai.onnx.ml.Normalizer"],
  ["float[4] w = {1.5, -2, 3}", "1.5"],
];
let failed = 0;
for (const [line, word] of cases) {
  const words = line.match(pattern) ?? [];
  if (!words.includes(word)) {
    console.error(`word pattern: ${JSON.stringify(word)} is not one word of ${JSON.stringify(line)}: ${JSON.stringify(words)}`);
    failed += 1;
  }
}
if (failed > 0) process.exit(1);
console.log(`word pattern: ${cases.length} cases`);
