# PostgreSQL from Debian's archive, for bench/deploy_check.sh where postgres:16-bookworm cannot be pulled.
ARG BASE=opjudge-base/python:3.11-bookworm
FROM ${BASE}
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/*
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
EXPOSE 5432
ENTRYPOINT ["/usr/local/bin/postgres-entrypoint"]
