// An image the extension imports is, in @rancher/shell's webpack build (Vue CLI's asset modules), the URL of the
// file the build emits beside the script.
declare module '*.svg' {
  const url: string;
  export default url;
}
