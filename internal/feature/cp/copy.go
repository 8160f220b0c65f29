package cp

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/crisp-cri/crisp/internal/base/termsafe"
	"github.com/crisp-cri/crisp/internal/cli/cmdutil"
	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/session"
	"github.com/crisp-cri/crisp/internal/transport"
)

// The ways to the container's side (--way): auto tries tar over exec and,
// when the container has no tar, goes through the node's view of its root.
const (
	WayTar  cmdutil.Way = "tar"
	WayRoot cmdutil.Way = "root"
)

// Ways are cp's ways in auto's order.
var Ways = []cmdutil.Way{WayTar, WayRoot}

// Copy is one `crisp cp`.
type Copy struct {
	Request
	Way cmdutil.Way
	TLS cmdutil.TLSFlags
	// ProcRoot is where the node's processes are seen ("/proc"); tests may
	// point it elsewhere.
	ProcRoot string
	// ErrIsTerminal says whether the error stream is a terminal (the
	// progress bar is drawn only there).
	ErrIsTerminal func() bool
	// KeepModes keeps setuid, setgid and sticky bits and ignores Umask on
	// a copy out (--preserve-mode); by default a copy out drops the
	// former and applies the latter, as kubectl cp does.
	KeepModes bool
	// Umask is the process's umask (CurrentUmask), applied on a copy out.
	Umask fs.FileMode
	// SizeLimit bounds the file content a copy out writes (--size-limit;
	// 0: only the destination's free space does).
	SizeLimit int64
}

// Run copies c's request in the container d reaches.
func Run(ctx context.Context, d session.Deps, c Copy) error {
	run, err := d.ConnectRunning(ctx, "cp", "container", "cp reaches files through a running container", c.Container)
	if err != nil {
		return err
	}
	cli, settings, ctr := run.Cli, run.Settings, run.Container
	defer func() { _ = cli.Close() }() // closing a gRPC connection reports nothing to act on
	j := &job{deps: d, c: c, run: run}
	if c.Way != WayRoot {
		cfg, err := d.TransportConfig(c.TLS, settings)
		if err != nil {
			return err
		}
		offers, err := transport.ExecOffers(transport.Auto, "")
		if err != nil {
			return err
		}
		x := &execer{deps: d, cli: cli, id: ctr.Id, offers: offers, cfg: cfg}
		d.Logf("cp: tar over exec in container %s", client.ShortID(ctr.Id))
		err = j.viaTar(ctx, tarSide{x})
		var ee *execError
		if c.Way == WayTar || !errors.As(err, &ee) || !ee.missing() {
			return j.explain(err)
		}
		d.Logf("cp: the container has no tar (%s); copying through the node's view of its root", termsafe.Printable(err.Error()))
	}
	return j.explain(j.viaRoot(ctx))
}

// job is one copy under way.
type job struct {
	deps session.Deps
	c    Copy
	run  session.Running
}

// warn writes a warning line. Warnings name the container's files: the
// whole message is escaped, line breaks too, so a name can neither drive
// the terminal nor forge a line.
func (j *job) warn(msg string) {
	_, _ = fmt.Fprintf(j.deps.Streams.ErrOut, "crisp: cp: warning: %s\n", termsafe.Printable(msg)) // the error stream is the last resort: a failed write there has nowhere to go
}

// progress is a bar for a copy of total() bytes (nil total, or 0:
// unknown), or nil when the error stream is no terminal.
func (j *job) progress(total func() int64) *Progress {
	if j.c.ErrIsTerminal == nil || !j.c.ErrIsTerminal() {
		return nil
	}
	var n int64
	if total != nil {
		n = total()
	}
	return NewProgress(j.deps.Streams.ErrOut, "crisp cp", n, nil)
}

// stageName is a fresh name for a copy under way beside its destination.
func stageName() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on Linux
	return ".crisp-cp-" + hex.EncodeToString(b[:])
}

// localSource opens the local source's directory and names the source in it.
func localSource(local string) (*Dir, string, fs.FileMode, error) {
	abs, err := filepath.Abs(local)
	if err != nil {
		return nil, "", 0, err
	}
	st, err := os.Lstat(abs)
	if err != nil {
		return nil, "", 0, err
	}
	d, err := OpenBeneath(filepath.Dir(abs))
	if err != nil {
		return nil, "", 0, err
	}
	return d, filepath.Base(abs), st.Mode(), nil
}

// localDest decides where a copy out lands: in LOCAL under the source's
// name when LOCAL is a directory, else at LOCAL itself, whose directory
// must exist. It opens that directory.
func localDest(local, srcBase string) (*Dir, string, error) {
	st, err := os.Stat(local)
	switch {
	case err == nil && st.IsDir():
		d, err := OpenBeneath(local)
		return d, srcBase, err
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return nil, "", err
	case strings.HasSuffix(local, "/"):
		return nil, "", fmt.Errorf("no directory %s here: create it first, or drop the trailing / to copy to that name", local)
	}
	parent := filepath.Dir(local)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return nil, "", fmt.Errorf("no directory %s here to copy %s into: create it first", parent, filepath.Base(local))
	}
	d, err := OpenBeneath(parent)
	return d, filepath.Base(local), err
}

// unpackInto unpacks the archive that produce writes (its error ends the
// stream) into dir (inside d) as final, staged first and renamed into
// place; on any failure the stage is removed.
func (j *job) unpackInto(ctx context.Context, d *Dir, dir, final string, count Counter, produce func(io.Writer) error) error {
	stage := path.Join(dir, stageName())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := produce(pw)
		pw.CloseWithError(err) // nil: a clean end
		done <- err
	}()
	isDir, err := Unpack(tar.NewReader(ctxReader{ctx, pr}), d, stage, Landing{
		Count: count, Warn: j.warn, FromContainer: !j.c.In, KeepModes: j.c.KeepModes, Umask: j.c.Umask, Limit: j.limit(),
	})
	if err == nil {
		_, err = io.Copy(io.Discard, pr) // the archive's padding, so the producer ends
	}
	pr.CloseWithError(errUnpackEnded)
	if perr := <-done; perr != nil && !errors.Is(perr, errUnpackEnded) {
		err = perr // the producer's failure says more than the cut stream
	}
	if errors.Is(err, errSkippedTop) {
		return nil // warned: a copy of one link leading out copies nothing
	}
	if err == nil {
		err = d.Rename(stage, path.Join(dir, final), !isDir)
		if errors.Is(err, fs.ErrExist) {
			err = fmt.Errorf("%s exists: cp does not merge directories; remove it or copy to another name", d.display(path.Join(dir, final)))
		}
	}
	if err != nil {
		if rerr := d.RemoveAll(stage); rerr != nil {
			j.warn(fmt.Sprintf("could not remove the partial copy %s: %v", d.display(stage), rerr))
		}
	}
	return err
}

// limit is what bounds this copy's file content: --size-limit, on a copy
// out only (a copy in is the operator's own files).
func (j *job) limit() int64 {
	if j.c.In {
		return 0
	}
	return j.c.SizeLimit
}

var errUnpackEnded = errors.New("cp: the unpacking side stopped reading")

// ctxReader ends a copy once ctx is done (a signal): the node's way has
// no stream for the cancellation to cut.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.r.Read(p)
}

// viaTar copies with tar over exec in the container.
func (j *job) viaTar(ctx context.Context, t tarSide) error {
	r := j.c.Request
	if !r.In {
		ld, final, err := localDest(r.Local, path.Base(r.Remote))
		if err != nil {
			return err
		}
		defer func() { _ = ld.Close() }()
		bar := j.progress(nil)
		defer bar.Finish()
		return j.unpackInto(ctx, ld, "", final, bar, func(w io.Writer) error { return t.packTo(ctx, r.Remote, w) })
	}
	ls, base, mode, err := localSource(r.Local)
	if err != nil {
		return err
	}
	defer func() { _ = ls.Close() }()
	// Is tar there at all? Ask before anything is written.
	if err := t.x.run(ctx, []string{"tar", "-c", "-f", "/dev/null", "-C", "/", "dev/null"}, nil, nil); err != nil {
		return err
	}
	dir, final := path.Dir(r.Remote), path.Base(r.Remote)
	if t.isDir(ctx, r.Remote) {
		dir, final = path.Clean(r.Remote), base
	} else if strings.HasSuffix(r.Remote, "/") {
		return fmt.Errorf("no directory %s in container %s", r.Remote, j.c.Container)
	}
	target := path.Join(dir, final)
	if t.isDir(ctx, target) || mode.IsDir() && t.exists(ctx, target) {
		return fmt.Errorf("%s exists in the container and %s would replace or merge into it: cp does not; remove it or copy to another name", target, r.Local)
	}
	stage := stageName()
	bar := j.progress(func() int64 { return treeSize(ls, base) })
	defer bar.Finish()
	pr, pw := io.Pipe()
	packed := make(chan error, 1)
	go func() {
		tw := tar.NewWriter(pw)
		err := Pack(ls, base, stage, tw, bar, j.warn)
		if err == nil {
			err = tw.Close()
		}
		if err == nil {
			// GNU tar reads whole 10 KiB records: end on one.
			_, err = pw.Write(make([]byte, 10240))
		}
		pw.CloseWithError(err)
		packed <- err
	}()
	err = t.x.run(ctx, []string{"tar", "-x", "-f", "-", "-C", dir}, pr, nil)
	_ = pr.CloseWithError(errUnpackEnded)
	if perr := <-packed; perr != nil && !errors.Is(perr, errUnpackEnded) && !errors.Is(perr, io.ErrClosedPipe) {
		err = perr // a local file that could not be read says more than tar's end
	}
	if err == nil {
		err = t.x.run(ctx, []string{"mv", "-f", path.Join(dir, stage), target}, nil, nil)
	}
	if err != nil {
		// Best effort: a runtime that cut the stream may refuse this too.
		_ = t.x.run(context.WithoutCancel(ctx), []string{"rm", "-rf", path.Join(dir, stage)}, nil, nil)
	}
	return err
}

// viaRoot copies through /proc/PID/root, every path resolved inside it.
func (j *job) viaRoot(ctx context.Context) error {
	pid, err := j.pid(ctx)
	if err != nil {
		return err
	}
	procRoot := j.c.ProcRoot
	if procRoot == "" {
		procRoot = "/proc"
	}
	j.deps.Logf("cp: through the node's view of the container's root, %s/%d/root (pid %d)", procRoot, pid, pid)
	root, err := OpenInRoot(fmt.Sprintf("%s/%d/root", procRoot, pid), "container "+j.c.Container)
	if err != nil {
		return fmt.Errorf("cp: cannot open container %s's root from the node (crisp must run on the node, as root, for a container without tar): %w", j.c.Container, err)
	}
	defer func() { _ = root.Close() }()
	// The PID was the container's when the runtime said so; had it exited
	// and the PID gone to another process before the open, the runtime
	// now gives another answer.
	if again, err := j.pid(ctx); err != nil || again != pid {
		return fmt.Errorf("cp: container %s stopped or restarted while its root was being opened; try again", j.c.Container)
	}
	r := j.c.Request
	if !r.In {
		name := strings.TrimPrefix(path.Clean(r.Remote), "/")
		if _, err := root.Lstat(name); err != nil {
			return err
		}
		ld, final, err := localDest(r.Local, path.Base(name))
		if err != nil {
			return err
		}
		defer func() { _ = ld.Close() }()
		bar := j.progress(func() int64 { return treeSize(root, name) })
		defer bar.Finish()
		return j.unpackInto(ctx, ld, "", final, bar, func(w io.Writer) error {
			tw := tar.NewWriter(w)
			if err := Pack(root, name, path.Base(name), tw, noCount{}, j.warn); err != nil {
				return err
			}
			return tw.Close()
		})
	}
	ls, base, _, err := localSource(r.Local)
	if err != nil {
		return err
	}
	defer func() { _ = ls.Close() }()
	name := strings.TrimPrefix(path.Clean(r.Remote), "/")
	dir, final := path.Dir(name), path.Base(name)
	if st, err := root.Stat(name); err == nil && st.Mode.IsDir() {
		dir, final = name, base
	} else if strings.HasSuffix(r.Remote, "/") {
		return fmt.Errorf("no directory %s in container %s", r.Remote, j.c.Container)
	} else if st, err := root.Stat(dir); err != nil {
		return err
	} else if !st.Mode.IsDir() {
		return fmt.Errorf("%s in container %s is not a directory", root.display(dir), j.c.Container)
	}
	bar := j.progress(func() int64 { return treeSize(ls, base) })
	defer bar.Finish()
	return j.unpackInto(ctx, root, dir, final, bar, func(w io.Writer) error {
		tw := tar.NewWriter(w)
		if err := Pack(ls, base, base, tw, noCount{}, j.warn); err != nil {
			return err
		}
		return tw.Close()
	})
}

// pid is the container's process ID on the node.
func (j *job) pid(ctx context.Context) (int, error) {
	pid, err := j.run.PID(ctx)
	if errors.Is(err, client.ErrNoPID) {
		return 0, fmt.Errorf("cp: container %s: %w, so its root cannot be reached from the node; use a container with tar (--way tar)",
			client.ShortID(j.run.Container.Id), err)
	}
	if err != nil {
		return 0, fmt.Errorf("cp: verbose status of container %s: %w", client.ShortID(j.run.Container.Id), err)
	}
	return pid, nil
}
