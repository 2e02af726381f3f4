// The image tools of image/build.sh: the assembler of the OCI image archives (cmd/assemble, on
// go-containerregistry) and the pod sandbox's pause program (cmd/pause, standard library only).
module github.com/kube-extender/image

go 1.26.0

require github.com/google/go-containerregistry v0.22.1

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	golang.org/x/sync v0.22.0 // indirect
)
