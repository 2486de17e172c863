// `node --import ./ts-register.mjs`: installs ts-hooks.mjs before the entry module loads.
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
