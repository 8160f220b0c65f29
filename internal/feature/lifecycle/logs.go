package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/crisp-cri/crisp/internal/client"
	"github.com/crisp-cri/crisp/internal/feature/logs"
)

// LogsOptions are crictl's logs flags besides the log reader's own.
type LogsOptions struct {
	logs.Options
	// Previous reads the log of the container's previous attempt.
	Previous bool
	// Reopen asks the runtime to reopen the log file first.
	Reopen bool
}

// Check validates the flags as crictl does and sets Since from since (a
// time or a duration before now); tailSet says --tail was given. Its
// errors are the user's: bad flags.
func (o *LogsOptions) Check(since string, tailSet bool, now time.Time) error {
	switch o.Stream {
	case "", logs.Stdout, logs.Stderr:
	default:
		return fmt.Errorf("--stream %q: want stdout or stderr", o.Stream)
	}
	if tailSet && o.Stream != "" {
		return errors.New("--tail and --stream cannot be combined (as in crictl)")
	}
	t, err := logs.ParseSince(since, now)
	if err != nil {
		return err
	}
	o.Since = t
	return nil
}

// Logs prints a container's log, read from the file the runtime names in
// ContainerStatus.LogPath (on this host, as crictl does).
func Logs(ctx context.Context, c *client.Client, ref string, o LogsOptions, out, errOut io.Writer) error {
	ctr, err := c.ResolveContainer(ctx, ref)
	if err != nil {
		return err
	}
	id := ctr.GetId()
	if o.Reopen {
		if err := c.ReopenContainerLog(ctx, id); err != nil {
			return err
		}
		notice(errOut, "container log reopened")
	}
	st, err := c.ContainerStatus(ctx, id, false)
	if err != nil {
		return err
	}
	path := st.GetStatus().GetLogPath()
	if path == "" {
		return fmt.Errorf("container %s (%s) has no log file: its config set no log_path (or the pod no log_directory)", id, ctr.GetMetadata().GetName())
	}
	if o.Previous {
		if path, err = logs.PreviousPath(path, st.GetStatus().GetMetadata().GetAttempt(), st.GetStatus().GetMetadata().GetName()); err != nil {
			return err
		}
	}
	running := func(ctx context.Context) (bool, error) {
		st, err := c.ContainerStatus(ctx, id, false)
		if err != nil {
			return false, err
		}
		return st.GetStatus().GetState() == runtimeapi.ContainerState_CONTAINER_RUNNING, nil
	}
	err = logs.Read(ctx, path, o.Options, running, out, errOut)
	if o.Follow && errors.Is(err, context.Canceled) {
		return nil // Ctrl-C ends following: that is not a failure
	}
	if err != nil {
		return fmt.Errorf("container %s: %w", id, err)
	}
	return nil
}
