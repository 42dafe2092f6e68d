import { ArgumentMetadata, BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';
import { RequestValidationError } from '../errors/request-validation.error';
import { compiledDto, LONE_SURROGATE, MAX_INPUT_DEPTH } from './compiled-validation';

/**
 * Global validation: unknown fields are dropped, types are never coerced (a string where a number is expected
 * is a 400). Failures are a RequestValidationError: its messages form an array, as the wallet document shows for
 * validation errors, and each carries its decorator's context for the interfaces with codes of their own.
 */
export function createValidationPipe(): ValidationPipe {
  return new SafeInputValidationPipe({
    whitelist: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    forbidUnknownValues: true,
    stopAtFirstError: true,
    // The target (the DTO instance) stays on the errors for shapes that echo a request field; never sent as is.
    validationError: { target: true, value: false },
    exceptionFactory: (errors: ValidationError[]) => RequestValidationError.fromErrors(errors),
  });
}

/**
 * Three kinds of input would get past validation and fail later as a 500: a string holding a NUL character, which
 * Postgres cannot store in text, a lone UTF-16 surrogate, which validators choke on, and a value nested so deeply that class-transformer's recursion overflows the
 * stack. Both are refused up front with a 400 naming where they were found. Clearly valid input of a DTO marked
 * @CompiledValidation() (the hot money routes) takes the fast path instead, which holds none of these.
 */
class SafeInputValidationPipe extends ValidationPipe {
  async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'custom') {
      const dto = compiledDto(value, metadata.metatype);
      if (dto !== undefined) return dto;
      const problem = inputProblem(value, metadata.type === 'body' ? '' : (metadata.data ?? metadata.type));
      if (problem !== null) throw new BadRequestException([problem]);
    }
    return super.transform(value, metadata);
  }
}

/** Iterative, so that the check itself cannot overflow on deep input. */
function inputProblem(root: unknown, rootPath: string): string | null {
  const stack: Array<[unknown, string, number]> = [[root, rootPath, 0]];
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return `${path || 'body'} must not contain NUL characters`;
      if (LONE_SURROGATE.test(value)) return `${path || 'body'} must be valid Unicode text`;
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_INPUT_DEPTH) return `${path || 'body'} is nested too deeply`;
    if (Array.isArray(value)) {
      value.forEach((item, i) => stack.push([item, `${path}[${i}]`, depth + 1]));
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) return `${path || 'body'} must not contain NUL characters`;
      if (LONE_SURROGATE.test(key)) return `${path || 'body'} must be valid Unicode text`;
      stack.push([item, path ? `${path}.${key}` : key, depth + 1]);
    }
  }
  return null;
}
