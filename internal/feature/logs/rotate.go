package logs

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// rotation is what a follower knows of the files the log was rotated to.
// The kubelet rotates a container's log by renaming <name> to
// <name>.<YYYYMMDD-hhmmss> and asking the runtime to reopen <name>; it
// gzips older rotated files (<name>.<time>.gz, via a .tmp file) and
// removes the oldest beyond --container-log-max-files. The timestamped
// names sort in rotation order.
type rotation struct {
	dir, base string
	// seen are the rotated names (without .gz) already in the directory
	// when they were last listed, and seenFiles those files: never read
	// again, even once renamed (logrotate's .1 -> .2).
	seen      map[string]bool
	seenFiles []os.FileInfo
}

func newRotation(path string) *rotation {
	r := &rotation{dir: filepath.Dir(path), base: filepath.Base(path), seen: map[string]bool{}}
	r.remember(r.names())
	return r
}

func (r *rotation) remember(names []string) {
	for _, n := range names {
		r.seen[n] = true
		if fi, err := os.Stat(filepath.Join(r.dir, n)); err == nil {
			r.seenFiles = append(r.seenFiles, fi)
		}
	}
}

func (r *rotation) seenFile(fi os.FileInfo) bool {
	for _, s := range r.seenFiles {
		if os.SameFile(s, fi) {
			return true
		}
	}
	return false
}

// names are the rotated files of the log, without their .gz, in order.
func (r *rotation) names() []string {
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		return nil
	}
	set := map[string]bool{}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, r.base+".") || strings.HasSuffix(n, ".tmp") {
			continue
		}
		set[strings.TrimSuffix(n, ".gz")] = true
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// passedOver reads, in order, the files rotated after old and before next
// (old is read to its end already): several rotations between two looks
// would otherwise lose whole files. What it cannot read any more it says
// on warn.
func (r *rotation) passedOver(old, next *os.File, w *writer, pending *[]byte, warn io.Writer) error {
	oldName := ""
	if target := openPath(old); filepath.Dir(target) == r.dir && strings.HasPrefix(filepath.Base(target), r.base+".") {
		oldName = strings.TrimSuffix(filepath.Base(target), ".gz")
	} // else unknown, or moved elsewhere: not a rotation crisp can place
	oldInfo, _ := old.Stat()
	nextInfo, _ := next.Stat()
	names := r.names()
	var read []string
	for _, n := range names {
		if r.seen[n] || oldName != "" && n <= oldName {
			continue
		}
		f, isNext, err := r.open(n, oldInfo, nextInfo)
		if isNext {
			break
		}
		if err != nil {
			warnf(warn, "rotated log file %s was removed before it could be read: its lines are missing", filepath.Join(r.dir, n))
			continue
		}
		if f == nil {
			continue // old itself
		}
		err = readRest(f, w, pending)
		_ = f.Close() // read-only: nothing to lose
		if err != nil {
			return err
		}
		read = append(read, n)
	}
	r.remember(names)
	if oldName != "" && !exists(filepath.Join(r.dir, oldName)) && !exists(filepath.Join(r.dir, oldName+".gz")) {
		// Removed rather than compressed: the rotated files are removed
		// oldest first, so some after it may be gone unread too.
		after := "its last line"
		if !w.last.IsZero() {
			after = w.last.Format(timeFormatOut)
		}
		warnf(warn, "rotated log file %s was removed while it was read (log files are rotated faster than they are read); %d later rotated file(s) read, any removed ones are missing: lines after %s may be lost",
			filepath.Join(r.dir, oldName), len(read), after)
	}
	return nil
}

// open opens the rotated file n, or its gzipped form; f is nil for old
// itself or a file read before, isNext says n is the file now being
// written.
func (r *rotation) open(n string, oldInfo, nextInfo os.FileInfo) (f io.ReadCloser, isNext bool, err error) {
	plain, err := os.Open(filepath.Join(r.dir, n))
	if err == nil {
		fi, err := plain.Stat()
		if err == nil && nextInfo != nil && os.SameFile(fi, nextInfo) {
			_ = plain.Close()
			return nil, true, nil
		}
		if err == nil && (oldInfo != nil && os.SameFile(fi, oldInfo) || r.seenFile(fi)) {
			_ = plain.Close()
			return nil, false, nil
		}
		return plain, false, nil
	}
	gz, err := os.Open(filepath.Join(r.dir, n+".gz"))
	if err != nil {
		return nil, false, err
	}
	zr, err := gzip.NewReader(gz)
	if err != nil {
		_ = gz.Close()
		return nil, false, fmt.Errorf("reading %s.gz: %w", n, err)
	}
	return gzipFile{zr, gz}, false, nil
}

type gzipFile struct {
	*gzip.Reader
	f *os.File
}

func (g gzipFile) Close() error { return errors.Join(g.Reader.Close(), g.f.Close()) }

// readRest prints what is left in f; its unfinished last line is shown as
// is (nothing will complete it once the runtime writes elsewhere).
func readRest(f io.Reader, w *writer, pending *[]byte) error {
	r := bufio.NewReader(f)
	for {
		chunk, err := r.ReadBytes('\n')
		*pending = append(*pending, chunk...)
		if err == nil {
			if err := w.line(*pending); err != nil {
				return err
			}
			*pending = (*pending)[:0]
			continue
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		if len(*pending) > 0 {
			if err := w.line(*pending); err != nil {
				return err
			}
			*pending = (*pending)[:0]
		}
		return nil
	}
}

// openPath is the path the open file f has now (Linux keeps it for a
// removed file too), empty where it cannot be known.
func openPath(f *os.File) string {
	target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(target, " (deleted)")
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func warnf(w io.Writer, format string, args ...any) {
	if w != nil {
		_, _ = fmt.Fprintf(w, "crisp: "+format+"\n", args...)
	}
}
