// Runs before `pnpm install`: a clear message beats a cryptic native-module error later.
// CommonJS and ES5-only syntax on purpose, so that even a very old Node can print it.
var major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  console.error(
    '\nMCI Server needs Node 24 or newer (found ' + process.version + ').\n' +
      'Install Node 24 and pnpm 10 with:\n\n' +
      '  npm install -g --prefix /usr/local node@24 pnpm@10\n\n' +
      'then check that `node -v` prints v24 and run `pnpm install` again.\n'
  );
  process.exit(1);
}
