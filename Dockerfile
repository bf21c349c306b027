# syntax=docker/dockerfile:1
# Tollgate: one static binary with the console embedded, running as a non-root user.
#   docker build --build-arg VERSION=$(git describe --tags --always) -t tollgate .
#   docker run -p 3000:3000 -v tollgate-data:/data tollgate          # SQLite + in-process cache under /data
# For MySQL + Redis see docker-compose.yml.

# 1. The console: web/dist.
FROM node:20 AS web
WORKDIR /src/web
COPY web/package.json web/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY web/ ./
RUN npm run build

# 2. The binary, with the built console embedded (web/embed.go embeds web/dist).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN rm -rf web/dist
COPY --from=web /src/web/dist ./web/dist
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X tollgate/app.Version=${VERSION}" -o /tollgate . \
	&& mkdir -p /data

# 3. Runtime: no shell, no package manager; uid/gid 65532 ("nonroot") owns /data.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /tollgate /tollgate
COPY --from=build --chown=65532:65532 /data /data
ENV DATA_DIR=/data \
	PORT=3000
USER 65532:65532
EXPOSE 3000
VOLUME /data
ENTRYPOINT ["/tollgate"]
