# policylint in a container, for GitLab CI, Jenkins and machines without Python (README "CI"):
#
#   docker build -t policylint .
#   docker run --rm -v "$PWD:/work" policylint ./manifests
#
# The release workflow (.github/workflows/release.yml) builds it and pushes it to
# ghcr.io/policylint/policylint with the release's version as its tag.

# The wheel is built in a stage of its own, so that the image holds neither the build backend
# nor the source tree: only the installed package and its dependencies.
FROM python:3.12.11-slim-bookworm AS build
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY policylint ./policylint
COPY rules ./rules
COPY schemas ./schemas
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.12.11-slim-bookworm
# git: `--diff`, `--staged`, `--config-ref` and `--baseline-ref` read the repository. The mounted
# checkout belongs to the host's user, not to the image's: without `safe.directory` git would
# refuse to read it ("dubious ownership").
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git \
    && rm -rf /var/lib/apt/lists/* \
    && git config --system --add safe.directory '*'
COPY --from=build /wheels /tmp/wheels
# The wheels built above, and nothing from an index: the versions are the build stage's.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir --no-index --find-links /tmp/wheels policylint \
    && rm -rf /tmp/wheels
# Not root: a linter reads the files it is given; it needs no privilege to do so. The parse cache
# goes to the user's home, inside the container, never into the mounted tree.
RUN useradd --uid 10001 --create-home --shell /usr/sbin/nologin policylint
USER 10001
WORKDIR /work
# No CMD: `docker run ... IMAGE` with no argument is a bare `policylint`, which lints the `paths`
# of the mounted repository's configuration file, or prints the help.
ENTRYPOINT ["policylint"]
