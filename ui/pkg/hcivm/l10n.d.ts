// The extension's translations: @rancher/shell's build loads YAML files as objects (js-yaml-loader).
declare module '*.yaml' {
  const translations: Record<string, unknown>;

  export default translations;
}
