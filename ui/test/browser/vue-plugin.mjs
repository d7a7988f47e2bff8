// An esbuild plugin that compiles .vue files with Vue's own compiler-sfc (script and template; no styles), so
// the browser check bundles the extension's components without @rancher/shell's webpack toolchain.
import fs from 'node:fs';
import { compileScript, compileTemplate, parse } from 'vue/compiler-sfc';

let n = 0;

export const vuePlugin = {
  name: 'vue',
  setup(build) {
    build.onLoad({ filter: /\.vue$/ }, (args) => {
      const { descriptor, errors } = parse(fs.readFileSync(args.path, 'utf8'), { filename: args.path });

      if (errors.length) {
        return { errors: errors.map((e) => ({ text: String(e) })) };
      }
      const id = `v${ n++ }`;
      const script = compileScript(descriptor, { id, inlineTemplate: false });
      const template = compileTemplate({ id, filename: args.path, source: descriptor.template.content, compilerOptions: { bindingMetadata: script.bindings } });

      if (template.errors.length) {
        return { errors: template.errors.map((e) => ({ text: String(e) })) };
      }
      const code = `${ script.content.replace('export default', 'const __sfc__ =') }\n${ template.code }\n__sfc__.render = render;\nexport default __sfc__;\n`;

      return { contents: code, loader: 'js', resolveDir: args.path.replace(/\/[^/]*$/, '') };
    });
  },
};
