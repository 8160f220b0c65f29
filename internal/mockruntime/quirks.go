package mockruntime

// Quirks are behaviours of real runtimes that the mock imitates on request,
// so that a client can be tested against them without the runtime. The zero
// value is the mock's own behaviour (containerd's, where they differ).
type Quirks struct {
	// ReuseMatchingPod: a RunPodSandbox whose metadata (name, namespace,
	// uid, attempt) matches an existing pod answers OK with that pod's ID,
	// creating nothing, as CRI-O does (containerd answers AlreadyExists).
	ReuseMatchingPod bool
	// AttachEndsWithStdin: a non-TTY attach ends when the client's stdin
	// ends, and at once when the client sends no stdin, while the container
	// runs on, as CRI-O's does (containerd's goes on until the container
	// exits).
	AttachEndsWithStdin bool
	// RequireUserSpecifiedImage: CreateContainer fails without
	// image.user_specified_image, as CRI-O's does when it verifies
	// signatures (signature_policy set).
	RequireUserSpecifiedImage bool
	// CloseEvents: GetContainerEvents ends the stream at once with an OK
	// status, as CRI-O's does with its default enable_pod_events = false.
	CloseEvents bool
	// RuntimeName, when set, is what Version reports instead of
	// crisp-mock: clients that tell runtimes apart by name take the mock
	// for the one it imitates.
	RuntimeName string
}

// CRIO are the quirks of CRI-O 1.34 with signature_policy set and its other
// settings at their defaults (scripts/crio/up.sh's configuration).
var CRIO = Quirks{
	ReuseMatchingPod: true, AttachEndsWithStdin: true, RequireUserSpecifiedImage: true, CloseEvents: true,
	RuntimeName: "cri-o",
}
