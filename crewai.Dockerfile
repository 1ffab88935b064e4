# The crewai runner image: the kubecrew image (its runner stays the task pod's entry point) plus Debian's python3 and a
# virtual environment with CrewAI and kubecrew's adapter (crewai-adapter/), for crews with `spec.runtime: crewai`.
# Every Python package comes from crewai-adapter/requirements.lock, pinned with hashes. Build: hack/build-image.sh
# crewai. Users' own crews go on top of it (FROM this image, their project copied in).
ARG KUBECREW_IMAGE=kubecrew:0.1.0

FROM ${KUBECREW_IMAGE}
USER root
# python3 from Debian (3.11 on bookworm, what the lock is compiled for) with its venv module for the build only.
# Behind a TLS-inspecting proxy, pip trusts the proxy's CA given as a build secret (see Dockerfile); never in a layer.
COPY crewai-adapter/requirements.lock /opt/crewai/requirements.lock
RUN --mount=type=secret,id=ca-bundle \
    if [ -s /run/secrets/ca-bundle ]; then export PIP_CERT=/run/secrets/ca-bundle; fi \
 && apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 python3-venv binutils >/dev/null \
 && python3 -m venv /opt/crewai/venv \
 && /opt/crewai/venv/bin/pip install --quiet --no-cache-dir --disable-pip-version-check --require-hashes \
      -r /opt/crewai/requirements.lock \
 # No package manager in the final image: pip, uv (crewai-cli's, for `crewai install`) and the venv module go once
 # the environment is made, and so do numpy's and pyarrow's own test suites (~60 MB that no task imports).
 && /opt/crewai/venv/bin/python -m pip uninstall --quiet --yes pip setuptools \
 && rm -f /opt/crewai/venv/bin/uv /opt/crewai/venv/bin/uvx \
 && site="$(/opt/crewai/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
 && find "$site/numpy" -type d -name tests -prune -exec rm -rf {} + \
 && rm -rf "$site/pyarrow/tests" \
 # Native libraries some wheels ship with their symbol tables (pyarrow's, uvloop's: ~80 MB) lose what no loader
 # needs. A stripped copy replaces a library only once the dynamic loader has loaded it: strip breaks some libraries
 # that auditwheel's patchelf rewrote (numpy's OpenBLAS: "ELF load command address/offset not page-aligned").
 && find "$site" -type f \( -name '*.so' -o -name '*.so.*' \) > /tmp/libs \
 && while read -r lib; do \
      if readelf -S "$lib" | grep -q '\.symtab' && strip --strip-unneeded -o "$lib.stripped" "$lib" \
        && /opt/crewai/venv/bin/python -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1])' "$lib.stripped" 2>/dev/null; \
      then mv "$lib.stripped" "$lib"; else rm -f "$lib.stripped"; fi; \
    done < /tmp/libs \
 && rm /tmp/libs \
 && DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq python3-venv python3.11-venv python3-pip-whl \
      python3-setuptools-whl binutils >/dev/null \
 && apt-get autoremove -y -qq >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/apt /var/log/dpkg.log
# The adapter, compiled ahead: the root filesystem is read-only in task pods, so Python cannot write bytecode there.
COPY crewai-adapter/kubecrew_crewai /opt/crewai/adapter/kubecrew_crewai
RUN echo /opt/crewai/adapter \
      > "$(/opt/crewai/venv/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/kubecrew_crewai.pth" \
 && /opt/crewai/venv/bin/python -m compileall -q /opt/crewai/adapter
# The runner starts `$KUBECREW_CREWAI_PYTHON -m kubecrew_crewai` for each crewai task.
ENV KUBECREW_CREWAI_PYTHON=/opt/crewai/venv/bin/python PYTHONDONTWRITEBYTECODE=1
USER 65532:65532
LABEL org.opencontainers.image.title="kubecrew-crewai" \
      org.opencontainers.image.description="The kubecrew runner with CrewAI: task pods of crews with spec.runtime crewai"
