// Imports a Chrome trace with speedscope's own importer (the npm package's
// browser bundle, run in a node vm without a DOM) and prints, as one JSON
// object, the profiles it made (name, total weight) and the warnings it gave.
//
// Usage: node speedscope_import.mjs BUNDLE.js TRACE.json
// Exit 0: imported; 1: speedscope refused the trace; 77: the bundle's layout
// is not the one this script knows (another speedscope version): skip.
import fs from 'node:fs'
import path from 'node:path'
import vm from 'node:vm'

const [bundlePath, tracePath] = process.argv.slice(2)
let src = fs.readFileSync(bundlePath, 'utf8')
// The bundle keeps its importers in a lazily loaded module behind a promise
// (`var jr=Promise.resolve().then(()=>(Sf(),kf))` in 1.25.0): publish it.
const m = src.match(/var (\w+)=Promise\.resolve\(\)\.then\(\(\)=>\((\w+)\(\),(\w+)\)\);/)
if (!m || !src.includes(`(await ${m[1]}).importProfileGroupFromText`)) {
  console.error('speedscope_import: unknown bundle layout')
  process.exit(77)
}
src = src.replace(m[0], m[0] + `globalThis.__importers=${m[1]};`)

// What the user interface touches while the bundle loads: a callable,
// constructible no-op whose every property is itself.
const absorb = new Proxy(function () {}, {
  get: (t, k) => (k === Symbol.toPrimitive ? () => '' : k === 'then' ? undefined : absorb),
  apply: () => absorb,
  construct: () => absorb,
  set: () => true,
  has: () => true,
})
const warnings = []
const quiet = { log() {}, info() {}, error: (...a) => warnings.push(a.join(' ')), warn: (...a) => warnings.push(a.join(' ')) }
const ctx = { console: quiet, setTimeout, clearTimeout, setInterval, clearInterval, TextDecoder, TextEncoder, URL, atob, btoa }
ctx.window = ctx
ctx.self = ctx
for (const k of ['document', 'navigator', 'location', 'localStorage', 'requestAnimationFrame', 'addEventListener', 'matchMedia', 'performance'])
  ctx[k] = absorb
vm.createContext(ctx)
try {
  vm.runInContext(src, ctx)
} catch (e) {
  // the user interface cannot start without a DOM; the importers are already there
}
if (!ctx.__importers) {
  console.error('speedscope_import: the importers were not reached')
  process.exit(77)
}
const importers = await ctx.__importers
// The name matters: speedscope picks an importer by file name first (".chrome.json" is a CPU profile).
const group = await importers.importProfileGroupFromText(path.basename(tracePath), fs.readFileSync(tracePath, 'utf8'))
if (!group) {
  console.error('speedscope_import: speedscope did not recognise the trace')
  process.exit(1)
}
const profiles = group.profiles.map(p => ({ name: p.getName(), weight: p.getTotalWeight() }))
console.log(JSON.stringify({ profiles, warnings }))
