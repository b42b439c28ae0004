# The parser, worker and trigger-check functions as a container image, used when the DAG-code bundle is larger
# than Lambda's 250 MB zip limit (infra/constructs/bundling.py): the same bundle folder as the zip would hold,
# on the Lambda runtime's own base image. Each function names its handler (the image config's command).
FROM public.ecr.aws/lambda/python:3.11

COPY bundle/ ${LAMBDA_TASK_ROOT}/
