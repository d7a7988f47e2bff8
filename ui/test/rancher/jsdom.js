// What jsdom lacks and @rancher/shell's components use (as @rancher/shell's own jest.setup.js provides).
const { TextEncoder, TextDecoder } = require('util');

global.TextEncoder = TextEncoder;
global.TextDecoder = TextDecoder;
window.matchMedia = window.matchMedia || (() => ({ matches: false, addListener() {}, removeListener() {}, addEventListener() {}, removeEventListener() {} }));
// The browser's structuredClone, which rke2.vue initMachinePools uses (jsdom lacks it): Node's structured clone.
if (!global.structuredClone) {
  const v8 = require('v8');

  global.structuredClone = (value) => v8.deserialize(v8.serialize(value));
}
