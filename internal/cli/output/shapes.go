package output

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ProtoJSON is a CRI message as crictl prints it: protojson with zero values
// written (attempt 0, SANDBOX_READY, empty maps and lists), unset messages
// left out, 64-bit integers as strings. ps, pods, images, stats, statsp,
// imagefsinfo and events print their responses this way.
func ProtoJSON(m proto.Message) (json.RawMessage, error) {
	data, err := protojson.MarshalOptions{EmitDefaultValues: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", m, err)
	}
	return data, nil
}

// PrintProto prints m in crictl's shape (ProtoJSON) as Print prints v.
func (p Printer) PrintProto(m proto.Message, table func(w io.Writer) error) error {
	data, err := ProtoJSON(m)
	if err != nil {
		return err
	}
	return p.Print(data, table)
}

// protoMap is ProtoJSON decoded into a map.
func protoMap(m proto.Message) (map[string]any, error) {
	data, err := ProtoJSON(m)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decoding %T: %w", m, err)
	}
	return out, nil
}

// withEveryField adds every top-level field of m's message type that the
// JSON lacks as null (an unset message such as resources or user), as
// crictl's inspect and inspectp do.
func withEveryField(m proto.Message, fields map[string]any) {
	fds := m.ProtoReflect().Descriptor().Fields()
	for i := range fds.Len() {
		name := fds.Get(i).JSONName()
		if _, ok := fields[name]; !ok {
			fields[name] = nil
		}
	}
}

// rfc3339 is a CRI timestamp (Unix nanoseconds) as crictl's inspect writes
// it: RFC 3339 with nanoseconds in the local zone.
func rfc3339(unixNano int64) string {
	return time.Unix(0, unixNano).Format(time.RFC3339Nano)
}

// ContainerStatusJSON is a ContainerStatus as crictl inspect shows it:
// every field present, createdAt, startedAt and finishedAt as RFC 3339 text
// (the zero time when the container has not started or finished).
func ContainerStatusJSON(cs *runtimeapi.ContainerStatus) (map[string]any, error) {
	m, err := protoMap(cs)
	if err != nil {
		return nil, err
	}
	withEveryField(cs, m)
	m["createdAt"] = rfc3339(cs.GetCreatedAt())
	var started, finished time.Time
	if cs.GetState() != runtimeapi.ContainerState_CONTAINER_CREATED {
		started = time.Unix(0, cs.GetStartedAt())
	}
	if cs.GetState() == runtimeapi.ContainerState_CONTAINER_EXITED ||
		(cs.GetState() == runtimeapi.ContainerState_CONTAINER_UNKNOWN && cs.GetFinishedAt() > 0) {
		finished = time.Unix(0, cs.GetFinishedAt())
	}
	m["startedAt"] = started.Format(time.RFC3339Nano)
	m["finishedAt"] = finished.Format(time.RFC3339Nano)
	return m, nil
}

// PodStatusJSON is a PodSandboxStatus as crictl inspectp shows it: every
// field present, createdAt as RFC 3339 text.
func PodStatusJSON(ps *runtimeapi.PodSandboxStatus) (map[string]any, error) {
	m, err := protoMap(ps)
	if err != nil {
		return nil, err
	}
	withEveryField(ps, m)
	m["createdAt"] = rfc3339(ps.GetCreatedAt())
	return m, nil
}

// ImageStatusJSON is an Image as crictl inspecti shows it.
func ImageStatusJSON(img *runtimeapi.Image) (map[string]any, error) {
	return protoMap(img)
}

// Status is one object of inspect, inspectp, inspecti and info: "status"
// and, at the top level beside it, every key of the runtime's verbose info
// (so containerd's "info" key gives `.info.pid`). A value that is a JSON
// object is decoded; anything else stays a string without its quotes, as
// crictl does.
type Status map[string]any

// NewStatus builds a Status from a status object (nil for none) and the
// runtime's info map.
func NewStatus(status map[string]any, info map[string]string) (Status, error) {
	out := Status{}
	if status != nil {
		out["status"] = status
	}
	keys := make([]string, 0, len(info))
	for k := range info {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := info[k]
		if strings.HasPrefix(v, "{") {
			var obj map[string]any
			if err := json.Unmarshal([]byte(v), &obj); err != nil {
				return nil, fmt.Errorf("the runtime's info %q is not the JSON object it looks like: %w", k, err)
			}
			out[k] = obj
			continue
		}
		out[k] = strings.Trim(v, `"`)
	}
	return out, nil
}

// OneOrMany is how crictl prints statuses: one as itself, several as an
// array.
func OneOrMany(items []Status) any {
	if len(items) == 1 {
		return items[0]
	}
	return items
}

// RuntimeStatus is crictl info's object: "status" (conditions),
// "runtimeHandlers" and "features" when the runtime reports them (with the
// Go field names crictl's encoder gives them), and the verbose info keys
// ("config" an object) at the top level.
func RuntimeStatus(resp *runtimeapi.StatusResponse) (Status, error) {
	status := map[string]any{}
	if resp.GetStatus() != nil {
		var err error
		if status, err = protoMap(resp.GetStatus()); err != nil {
			return nil, err
		}
	}
	out, err := NewStatus(status, resp.GetInfo())
	if err != nil {
		return nil, err
	}
	if resp.GetRuntimeHandlers() != nil {
		handlers, err := plainJSON(resp.GetRuntimeHandlers())
		if err != nil {
			return nil, err
		}
		out["runtimeHandlers"] = handlers
	}
	if resp.GetFeatures() != nil {
		features, err := plainJSON(resp.GetFeatures())
		if err != nil {
			return nil, err
		}
		out["features"] = features
	}
	return out, nil
}

// plainJSON is v through encoding/json (the Go structs' snake_case tags,
// zero values omitted), which is how crictl encodes handlers and features.
func plainJSON(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(data, &out)
}
