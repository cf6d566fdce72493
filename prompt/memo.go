package prompt

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// A warm run of an unchanged workspace should not assemble its prompt
// again: PromptIn keeps the prompt it rendered, keyed by the configuration
// (by value) and the workspace, together with the stat of every file and
// directory the resolution read (bootstrap files, present or not, the
// workspace and skill directories whose listings it used, every SKILL.md).
// A later call with an equal configuration re-stats those paths and, when
// each is the same file (device, inode, size, modification time, as
// OpenClaw's workspace cache compares them) or still absent, returns the
// same prompt. Anything else resolves and renders again, through the
// per-file caches.
//
// Not memoized: a configuration with a bootstrap Hook (a function whose
// output no key can name) or ExtraFiles globs, a resolution in which a
// file was refused by the workspace guard or could not be read (why is
// not all in a stat), and platforms without quickStat.

// maxPromptMemos bounds the memo (reset on overflow, as the other caches).
const maxPromptMemos = 1024

type promptMemo struct {
	deps   []dep
	prompt string
	stable int
	// watch, when set, lets the warm check trust the watches of the
	// dependencies' directories (see watch_linux.go).
	watch atomic.Pointer[watchSet]
}

// dep is one path a resolution depended on, as stat saw it before the
// resolution read it.
type dep struct {
	pathZ []byte // the path, NUL-terminated
	relZ  []byte // the path below the workspace, NUL-terminated (nil: not below it)
	sig   fileSig
	ok    bool // the path existed
}

// current re-stats d: by its path relative to dirfd, the workspace's
// descriptor, when it has one (dirfd >= 0), else by its full path.
func (d *dep) current(dirfd int) bool {
	var sig fileSig
	var ok bool
	if dirfd >= 0 && d.relZ != nil {
		sig, ok = quickStatAtZ(dirfd, d.relZ)
	} else {
		sig, ok = quickStatZ(d.pathZ)
	}
	if ok != d.ok {
		return false
	}
	return !ok || sig.same(d.sig)
}

func (s fileSig) same(o fileSig) bool {
	return s.size == o.size && s.mtime.Equal(o.mtime) && s.id == o.id && s.regular == o.regular
}

// depRecorder collects a resolution's dependencies; a nil recorder
// records nothing.
type depRecorder struct {
	deps []dep
	bad  bool
	dir  string // the workspace, the first dependency
}

func (d *depRecorder) stat(path string) {
	if d == nil {
		return
	}
	sig, ok := quickStat(path)
	dp := dep{pathZ: append([]byte(path), 0), sig: sig, ok: ok}
	if len(d.deps) == 0 {
		d.dir = path
	} else if rel, below := strings.CutPrefix(path, d.dir+string(filepath.Separator)); below && d.dir != "" {
		dp.relZ = append([]byte(rel), 0)
	}
	d.deps = append(d.deps, dp)
}

// fail marks the resolution as one not to memoize.
func (d *depRecorder) fail() {
	if d != nil {
		d.bad = true
	}
}

// PromptIn resolves cfg in the workspace dir and renders the prompt with
// rd (nil: an uncached Renderer), returning the prompt and the length of
// its stable prefix (Layout.StableLen). dir is the workspace's absolute
// path with symlinks resolved; open opens it as a Root, and is called only
// when the prompt must be resolved again. A call with a configuration
// equal to an earlier one's, for the same dir, whose files and directories
// are all unchanged returns the earlier prompt at the cost of one stat per
// file and directory (see the memo's rules above); the Renderer is then
// not used.
func (r *Resolver) PromptIn(cfg *Config, dir string, open func() (*os.Root, error), rd *Renderer) (string, int, error) {
	ks := keyScratches.Get().(*keyScratch)
	defer ks.put()
	key, memoize := ks.key(cfg, dir)
	if memoize {
		r.mu.Lock()
		m := r.memo[string(key)]
		r.mu.Unlock()
		if m != nil && m.current() {
			return m.prompt, m.stable, nil
		}
	}
	root, err := open()
	if err != nil {
		return "", 0, err
	}
	var rec *depRecorder
	if memoize {
		rec = &depRecorder{}
		rec.stat(dir)
	}
	wst, err := root.Stat(".")
	if err != nil || !wst.IsDir() {
		return "", 0, fmt.Errorf("%w: %s: not a directory", ErrWorkspace, root.Name())
	}
	res, err := r.resolveIn(cfg, dir, root, wst, rec)
	if err != nil {
		return "", 0, err
	}
	if rd == nil {
		rd = &Renderer{}
	}
	buf, lay, err := rd.AppendPrompt(nil, &res.Params)
	if err != nil {
		return "", 0, err
	}
	out := string(buf)
	if memoize && !rec.bad {
		m := &promptMemo{deps: rec.deps, prompt: out, stable: lay.StableLen}
		// Watch, then verify by stat: a change before the watches
		// existed shows in the stats, any later one as an event.
		if set := m.arm(); set != nil && m.current() {
			m.watch.Store(set)
		}
		r.mu.Lock()
		if r.memo == nil || len(r.memo) >= maxPromptMemos {
			r.memo = make(map[string]*promptMemo)
		}
		r.memo[string(key)] = m
		r.mu.Unlock()
	}
	return out, lay.StableLen, nil
}

// memoStatChecks counts warm checks that stat'ed every dependency (tests).
var memoStatChecks atomic.Int64

// current re-stats the memo's dependencies: the workspace by its path,
// then, while it is still the directory the memo saw, the files below it
// relative to a descriptor of it.
func (m *promptMemo) current() bool {
	if len(m.deps) == 0 {
		return true
	}
	ws := &m.deps[0]
	if !ws.current(-1) {
		return false
	}
	dirfd := -1
	if ws.ok {
		dirfd = dirFDOf(ws.pathZ, ws.sig.id)
	}
	set := m.watch.Load()
	if set != nil {
		if cur, ok := m.watched(set, dirfd); ok {
			return cur
		}
		// An event on a watched directory: check by stat, and trust the
		// watches again from their state now if nothing changed.
		set = rearm(set)
	}
	memoStatChecks.Add(1)
	for i := 1; i < len(m.deps); i++ {
		if !m.deps[i].current(dirfd) {
			return false
		}
	}
	if set != nil {
		m.watch.Store(set)
	}
	return true
}

// memoKey appends the memo key of (cfg, dir) to b: dir, the environment
// the resolver reads (TZ for the time zone, HOME for "~/" skill paths) and
// every field of cfg, by value. It reports false when cfg cannot be
// memoized.
func memoKey(b []byte, cfg *Config, dir string) ([]byte, bool) {
	if !haveQuickStat || len(cfg.ExtraFiles) > 0 {
		return b, false
	}
	b = appendKeyString(b, dir)
	b = appendKeyString(b, os.Getenv("TZ"))
	b = appendKeyString(b, os.Getenv("HOME"))
	return configKey()(b, unsafe.Pointer(cfg))
}

// keyScratch is where PromptIn writes a memo key: the encoder's indirect
// calls would let a buffer on its stack, and the caller's Config, escape
// to the heap on every call; a pooled buffer and copy of the Config do not.
type keyScratch struct {
	buf []byte
	cfg Config
}

var keyScratches = sync.Pool{New: func() any { return &keyScratch{buf: make([]byte, 0, 1024)} }}

// key is memoKey of (a copy of) cfg and dir, in ks's buffer.
func (ks *keyScratch) key(cfg *Config, dir string) ([]byte, bool) {
	ks.cfg = *cfg
	key, ok := memoKey(ks.buf[:0], &ks.cfg, dir)
	ks.buf = key[:0]
	return key, ok
}

// put drops the Config's references and returns ks to the pool.
func (ks *keyScratch) put() {
	ks.cfg = Config{}
	keyScratches.Put(ks)
}

// keyFunc appends the key of the value at p, as appendKeyValue encodes
// it, and reports false for a value it cannot encode.
type keyFunc func(b []byte, p unsafe.Pointer) ([]byte, bool)

// configKey is Config's key encoder, made once from its type: per run,
// the fields are read at their offsets rather than walked by reflection
// (which was most of a warm run's prompt cost).
var configKey = sync.OnceValue(func() keyFunc { return compileKey(reflect.TypeFor[Config]()) })

// compileKey returns the encoder of values of type t: appendKeyValue's
// encoding, reflection left to maps (whose keys it sorts).
func compileKey(t reflect.Type) keyFunc {
	switch t.Kind() {
	case reflect.String:
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) { return appendKeyString(b, *(*string)(p)), true }
	case reflect.Bool:
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			if *(*bool)(p) {
				return append(b, 1), true
			}
			return append(b, 0), true
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		size := t.Size()
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			var n int64
			switch size {
			case 1:
				n = int64(*(*int8)(p))
			case 2:
				n = int64(*(*int16)(p))
			case 4:
				n = int64(*(*int32)(p))
			default:
				n = *(*int64)(p)
			}
			return binary.AppendVarint(b, n), true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		size := t.Size()
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			var n uint64
			switch size {
			case 1:
				n = uint64(*(*uint8)(p))
			case 2:
				n = uint64(*(*uint16)(p))
			case 4:
				n = uint64(*(*uint32)(p))
			default:
				n = *(*uint64)(p)
			}
			return binary.AppendUvarint(b, n), true
		}
	case reflect.Float32:
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(float64(*(*float32)(p)))), true
		}
	case reflect.Float64:
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(*(*float64)(p))), true
		}
	case reflect.Struct:
		type field struct {
			off uintptr
			enc keyFunc
		}
		fields := make([]field, t.NumField())
		for i := range fields {
			f := t.Field(i)
			fields[i] = field{f.Offset, compileKey(f.Type)}
		}
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			ok := true
			for _, f := range fields {
				if b, ok = f.enc(b, unsafe.Add(p, f.off)); !ok {
					return b, false
				}
			}
			return b, true
		}
	case reflect.Slice, reflect.Array:
		elem, size := compileKey(t.Elem()), t.Elem().Size()
		slice := t.Kind() == reflect.Slice
		n := 0
		if !slice {
			n = t.Len()
		}
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			data, n := p, n
			if slice {
				h := (*[]byte)(p) // every slice header has this layout
				if *h == nil {
					return append(b, 0), true
				}
				data, n = unsafe.Pointer(unsafe.SliceData(*h)), len(*h)
			}
			b = append(b, 1)
			b = binary.AppendUvarint(b, uint64(n))
			ok := true
			for i := range n {
				if b, ok = elem(b, unsafe.Add(data, uintptr(i)*size)); !ok {
					return b, false
				}
			}
			return b, true
		}
	case reflect.Pointer:
		var elem keyFunc
		var once sync.Once // a recursive type compiles its element on first use
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			q := *(*unsafe.Pointer)(p)
			if q == nil {
				return append(b, 0), true
			}
			once.Do(func() { elem = compileKey(t.Elem()) })
			return elem(append(b, 1), q)
		}
	case reflect.Map:
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			return appendKeyValue(b, reflect.NewAt(t, p).Elem())
		}
	case reflect.Interface:
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			if (*[2]unsafe.Pointer)(p)[0] == nil {
				return append(b, 0), true
			}
			return b, false
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return func(b []byte, p unsafe.Pointer) ([]byte, bool) {
			if *(*unsafe.Pointer)(p) == nil {
				return append(b, 0), true
			}
			return b, false
		}
	}
	return func(b []byte, p unsafe.Pointer) ([]byte, bool) { return b, false } // complex
}

func appendKeyString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendKeyValue appends an unambiguous encoding of v; it reports false
// for a value it cannot encode (a non-nil function, channel or interface,
// a map without string keys).
func appendKeyValue(b []byte, v reflect.Value) ([]byte, bool) {
	ok := true
	switch v.Kind() {
	case reflect.String:
		b = appendKeyString(b, v.String())
	case reflect.Bool:
		if v.Bool() {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b = binary.AppendVarint(b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		b = binary.AppendUvarint(b, v.Uint())
	case reflect.Float32, reflect.Float64:
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
	case reflect.Struct:
		for i := range v.NumField() {
			if b, ok = appendKeyValue(b, v.Field(i)); !ok {
				return b, false
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			b = append(b, 0)
			break
		}
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(v.Len()))
		for i := range v.Len() {
			if b, ok = appendKeyValue(b, v.Index(i)); !ok {
				return b, false
			}
		}
	case reflect.Pointer:
		if v.IsNil() {
			b = append(b, 0)
			break
		}
		b = append(b, 1)
		return appendKeyValue(b, v.Elem())
	case reflect.Map:
		if v.IsNil() {
			b = append(b, 0)
			break
		}
		if v.Type().Key().Kind() != reflect.String {
			return b, false
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(x, y reflect.Value) int {
			switch xs, ys := x.String(), y.String(); {
			case xs < ys:
				return -1
			case xs > ys:
				return 1
			}
			return 0
		})
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(keys)))
		for _, k := range keys {
			b = appendKeyString(b, k.String())
			if b, ok = appendKeyValue(b, v.MapIndex(k)); !ok {
				return b, false
			}
		}
	default: // Func, Chan, Interface, UnsafePointer, Complex
		if v.Kind() != reflect.Complex64 && v.Kind() != reflect.Complex128 && v.IsNil() {
			b = append(b, 0)
			break
		}
		return b, false
	}
	return b, true
}
