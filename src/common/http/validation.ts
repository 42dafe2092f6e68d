import { BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';

/**
 * Global validation: unknown fields are dropped, types are never coerced (a string where a number is expected
 * is a 400), and the messages come back as an array, as the wallet document shows for validation errors.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    forbidUnknownValues: true,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors: ValidationError[]) => new BadRequestException(flatten(errors)),
  });
}

function flatten(errors: ValidationError[], prefix = ''): string[] {
  const messages: string[] = [];
  for (const error of errors) {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    messages.push(...Object.values(error.constraints ?? {}).map((m) => (prefix ? `${path}: ${m}` : m)));
    if (error.children?.length) messages.push(...flatten(error.children, path));
  }
  return messages.length > 0 ? messages : ['Request body is invalid'];
}
