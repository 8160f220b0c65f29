package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// imagesOptions are the flags of `crisp images`.
type imagesOptions struct {
	f *factory

	Ref     string
	Quiet   bool
	NoTrunc bool
	Digests bool
}

func newImagesCommand(f *factory) *cobra.Command {
	o := &imagesOptions{f: f}
	return imagesCommand(o)
}

// imagesCommand binds the command's flags to o; tests parse into their own o.
func imagesCommand(o *imagesOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "images [IMAGE]",
		Short: "List images",
		Long: `List the images the runtime's image service holds, one line per tag, as crictl
images does. IMAGE (a name, name:tag or ID) asks for that image only. Image IDs
are truncated in the table unless --no-trunc; -q prints full image IDs only;
-o json and -o yaml print the runtime's full data.

EXIT STATUS
  0  the images were listed (also when none matched)
  1  the runtime could not be reached or failed
  2  bad flags or arguments`,
		Example: `  crisp images
  crisp images busybox
  crisp images -q
  crisp images --digests -o yaml`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErrorf("%s takes at most one IMAGE, got %d", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Complete(args)
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&o.Quiet, "quiet", "q", false, "print image IDs only")
	fl.BoolVar(&o.NoTrunc, "no-trunc", false, "do not truncate image IDs")
	fl.BoolVar(&o.Digests, "digests", false, "show a DIGEST column")
	return cmd
}

// Complete takes the optional image argument.
func (o *imagesOptions) Complete(args []string) {
	if len(args) == 1 {
		o.Ref = args[0]
	}
}

// Validate rejects bad input before the runtime is dialed.
func (o *imagesOptions) Validate() error {
	return validateQuiet(o.Quiet, o.f.Global.Output)
}

// Run lists the images and prints them.
func (o *imagesOptions) Run(ctx context.Context) error {
	c, err := o.f.Client()
	if err != nil {
		return err
	}
	defer c.Close()
	images, err := c.ListImages(ctx, o.Ref)
	if err != nil {
		return err
	}
	if o.Quiet {
		for _, img := range images {
			fmt.Fprintln(o.f.Streams.Out, img.GetId())
		}
		return nil
	}
	data, err := protoData(&runtimeapi.ListImagesResponse{Images: images})
	if err != nil {
		return err
	}
	return printData(o.f.Streams.Out, o.f.Global.Output, data, func(w io.Writer) error {
		header := []any{"IMAGE", "TAG"}
		if o.Digests {
			header = append(header, "DIGEST")
		}
		row(w, append(header, "IMAGE ID", "SIZE")...)
		for _, img := range images {
			digest := "<none>"
			if ds := img.GetRepoDigests(); len(ds) > 0 {
				if _, d, ok := strings.Cut(ds[0], "@"); ok {
					digest = truncID(d, o.NoTrunc)
				}
			}
			for _, rt := range repoTags(img) {
				cells := []any{rt[0], rt[1]}
				if o.Digests {
					cells = append(cells, digest)
				}
				row(w, append(cells, truncID(img.GetId(), o.NoTrunc), humanSize(img.GetSize()))...)
			}
		}
		return nil
	})
}

// repoTags splits an image's tags into (repository, tag) pairs; an image
// without tags shows its digest's repository, or <none>.
func repoTags(img *runtimeapi.Image) [][2]string {
	var out [][2]string
	for _, t := range img.GetRepoTags() {
		repo, tag := splitTag(t)
		out = append(out, [2]string{repo, tag})
	}
	if len(out) > 0 {
		return out
	}
	for _, d := range img.GetRepoDigests() {
		repo, _, _ := strings.Cut(d, "@")
		return [][2]string{{repo, "<none>"}}
	}
	return [][2]string{{"<none>", "<none>"}}
}

// splitTag splits name:tag, leaving a registry's :port in the name.
func splitTag(ref string) (repo, tag string) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i:], "/") {
		return ref, "<none>"
	}
	return ref[:i], ref[i+1:]
}
