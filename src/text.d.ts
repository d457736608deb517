// esbuild's text loader turns these files into strings at bundle time.
declare module '*.sh' {
  const text: string;
  export default text;
}
declare module '*.py' {
  const text: string;
  export default text;
}
