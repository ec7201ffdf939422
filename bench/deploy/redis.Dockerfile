# Redis from Debian's archive, for bench/deploy_check.sh where redis:7-bookworm cannot be pulled.
ARG BASE=opjudge-base/python:3.11-bookworm
FROM ${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends redis-server redis-tools \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /data && chown redis:redis /data
WORKDIR /data
USER redis
EXPOSE 6379
# Like the official image's entrypoint: no config file, so protected mode would refuse the other
# containers; the network (compose's own) is what protects it.
ENTRYPOINT ["/bin/sh", "-c", "if [ \"$1\" = redis-server ]; then shift; exec redis-server \"$@\" --protected-mode no; fi; exec \"$@\"", "--"]
CMD ["redis-server"]
