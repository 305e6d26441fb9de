/**
 * `npm run bench:peers`: installs the peers of the comparison scenario into the git-ignored bench/.peers/ (their
 * dependency trees are large and must not become the service's). Versions are pinned in bench/peers/*.package.json.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';

const dir = new URL('../.peers/mastra/', import.meta.url);
mkdirSync(dir, { recursive: true });
copyFileSync(new URL('./mastra.package.json', import.meta.url), new URL('package.json', dir));
execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save'], { cwd: dir, stdio: 'inherit' });
