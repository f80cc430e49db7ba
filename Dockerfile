# Tollgate's image for people with Docker. `make image` builds the same image without a daemon:
# the same user (65532, nonroot), entrypoint and labels.
# docker build --build-arg VERSION=$(cat VERSION) --build-arg REVISION=$(git rev-parse HEAD) -t tollgate .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG TARGETOS=linux
ARG TARGETARCH
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
    -ldflags "-s -w -X github.com/tollgate-dev/tollgate/internal/version.Version=${VERSION}" \
    -o /out/tollgate ./cmd/tollgate

FROM gcr.io/distroless/static:nonroot
ARG VERSION=dev
ARG REVISION=
LABEL org.opencontainers.image.source="https://github.com/tollgate-dev/tollgate" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.title="tollgate"
COPY --from=build /out/tollgate /usr/local/bin/tollgate
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/tollgate"]
